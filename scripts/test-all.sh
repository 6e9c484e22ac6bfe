#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what the tests need (pciutils for the lspci
# agreement test; QEMU and a guest kernel for the real-kernel test when run as root), then format,
# lint, unit and integration tests. .ci/run calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null; then
  echo "test-all: installing Rust with rustup"
  curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal -c rustfmt,clippy
  # shellcheck disable=SC1091
  . "$HOME/.cargo/env"
fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  missing=()
  # rdma-mummy-sys (under sideway, the verbs binding) builds with cmake and bindgen (libclang).
  command -v cmake >/dev/null || missing+=(cmake)
  ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1 || missing+=(libclang-dev)
  command -v lspci >/dev/null || missing+=(pciutils)
  command -v hyperfine >/dev/null || missing+=(hyperfine)
  # The HTML report's browser test drives headless Chromium through chromedriver.
  command -v chromium >/dev/null || missing+=(chromium)
  command -v chromedriver >/dev/null || missing+=(chromium-driver)
  # The burn-in namespace cluster shapes a host's link with tc tbf.
  command -v tc >/dev/null || missing+=(iproute2)
  if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -q >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  fi
  export FABRICDOCTOR_REQUIRE_PCIUTILS=1 FABRICDOCTOR_REQUIRE_NETNS=1
  export FABRICDOCTOR_REQUIRE_CHROMIUM=1
  # The real-kernel guest (tests/vm): build it once (cached), then the VM test runs in the suite.
  if [ "${FABRICDOCTOR_SKIP_VM:-0}" != 1 ]; then
    if bash tests/vm/build-guest.sh > target-vm-build.log 2>&1; then
      export FABRICDOCTOR_VM_TESTS=1
    else
      echo "test-all: building the QEMU guest failed (see target-vm-build.log); the VM test will fail" >&2
      export FABRICDOCTOR_VM_TESTS=1
    fi
  fi
else
  echo "test-all: not root: pciutils/QEMU are not installed; those tests skip loudly" >&2
fi

cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace
