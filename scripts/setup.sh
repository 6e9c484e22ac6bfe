#!/usr/bin/env bash
# The set-up both README commands share, sourced by scripts/main-job.sh and scripts/test-all.sh:
# Rust through rustup when cargo is missing, and the Debian packages the build needs. Each tool is
# found by the file it really provides (libclang.so for bindgen, not any libclang* such as
# libclang-cpp.so from llvm-*-dev, which bindgen cannot load). apt-get update runs once, before the
# first install; an install that fails stops the caller with apt's own error (the callers run under
# `set -e`, and nothing here hides apt's output).
#
# Usage: . scripts/setup.sh; setup_build_tools [extra Debian packages...]

# bindgen (clang-sys) loads libclang.so, libclang.so.N or libclang-N.so.M; LIBCLANG_PATH overrides the search.
# clang-sys's search: $LIBCLANG_PATH, then llvm-config, then /usr/lib*/llvm-*/lib and the
# multiarch library directories.
have_libclang() {
  local dir
  for dir in ${LIBCLANG_PATH:-} /usr/lib/llvm-*/lib /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib; do
    # libclang.so, libclang.so.N, libclang-N.so.M; never libclang-cpp.so.N (a different library).
    compgen -G "$dir/libclang.so*" >/dev/null && return 0
    compgen -G "$dir/libclang-[0-9]*.so*" >/dev/null && return 0
  done
  return 1
}

have_c_compiler() {
  command -v cc >/dev/null || command -v gcc >/dev/null || command -v clang >/dev/null
}

APT_UPDATED=0
apt_install() {
  [ $# -gt 0 ] || return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "setup: missing packages: $* (install them, or run as root on Debian/Ubuntu so this script can)" >&2
    return 1
  fi
  if [ "$APT_UPDATED" = 0 ]; then
    echo "setup: apt-get update"
    apt-get update -q
    APT_UPDATED=1
  fi
  echo "setup: apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

# The packages the build itself needs (rdma-mummy-sys under sideway runs cmake and bindgen; the
# linker is the C compiler), then whatever the caller adds. Rust comes last: rustup needs curl.
setup_build_tools() {
  local missing=()
  have_c_compiler || missing+=(gcc libc6-dev)
  command -v cmake >/dev/null || missing+=(cmake)
  have_libclang || missing+=(libclang-dev)
  command -v curl >/dev/null || missing+=(curl ca-certificates)
  missing+=("$@")
  apt_install "${missing[@]}"
  if ! have_libclang; then
    echo "setup: libclang.so still not found after installing libclang-dev; set LIBCLANG_PATH" >&2
    return 1
  fi
  if ! command -v cargo >/dev/null && [ -f "$HOME/.cargo/env" ]; then
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
  fi
  if ! command -v cargo >/dev/null; then
    echo "setup: installing Rust with rustup"
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal -c rustfmt,clippy
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
  fi
}
