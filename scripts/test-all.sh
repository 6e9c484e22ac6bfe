#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what the build and the tests need (Rust with
# rustup, cmake and libclang for the verbs binding; as root also pciutils for the lspci agreement
# test, Chromium for the HTML report's browser test, iproute2 for the namespace clusters, Slurm's
# daemons and munge for the health-check test, and QEMU with a guest kernel for the real-kernel test), then format, lint, unit and integration tests.
# .ci/run calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/setup.sh
. scripts/setup.sh

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  extra=()
  command -v lspci >/dev/null || extra+=(pciutils)
  command -v hyperfine >/dev/null || extra+=(hyperfine)
  # The HTML report's browser test drives headless Chromium through chromedriver.
  command -v chromium >/dev/null || extra+=(chromium)
  command -v chromedriver >/dev/null || extra+=(chromium-driver)
  # The burn-in namespace cluster shapes a host's link with tc tbf.
  command -v tc >/dev/null || extra+=(iproute2)
  # The congestion pulse test drops packets in a namespace with nftables (numgen).
  command -v nft >/dev/null || extra+=(nftables)
  # `slurm health-check` is tested against a real one-node Slurm cluster the test starts itself.
  command -v slurmctld >/dev/null || extra+=(slurmctld)
  command -v slurmd >/dev/null || extra+=(slurmd)
  command -v srun >/dev/null || extra+=(slurm-client)
  command -v munged >/dev/null || extra+=(munge)
  # `serve` is scraped by a real Prometheus, with node_exporter reading its textfile; its systemd
  # unit is checked with systemd-analyze verify.
  command -v prometheus >/dev/null || extra+=(prometheus)
  command -v prometheus-node-exporter >/dev/null || extra+=(prometheus-node-exporter)
  command -v systemd-analyze >/dev/null || extra+=(systemd)
  setup_build_tools "${extra[@]}"
  export FABRICDOCTOR_REQUIRE_PCIUTILS=1 FABRICDOCTOR_REQUIRE_NETNS=1 FABRICDOCTOR_REQUIRE_SLURM=1
  export FABRICDOCTOR_REQUIRE_PROMETHEUS=1 FABRICDOCTOR_REQUIRE_SYSTEMD_ANALYZE=1
  export FABRICDOCTOR_REQUIRE_CHROMIUM=1
  # The real-kernel guest (tests/vm): build it once (cached), then the VM test runs in the suite;
  # a failed build is not hidden: the VM test then fails and names the log.
  if [ "${FABRICDOCTOR_SKIP_VM:-0}" != 1 ]; then
    if ! bash tests/vm/build-guest.sh > target-vm-build.log 2>&1; then
      echo "test-all: building the QEMU guest failed (see target-vm-build.log); the VM test will fail" >&2
    fi
    export FABRICDOCTOR_VM_TESTS=1
  fi
else
  setup_build_tools
  echo "test-all: not root: pciutils, Chromium and QEMU are not installed; those tests skip loudly" >&2
fi

# The real-world answer keys beside the clone: required in CI (a clean clone with ../shared beside
# it); a lone clone skips those tests loudly.
if [ "${CI:-}" = true ] || [ -d ../shared/realworld ]; then
  export FABRICDOCTOR_REQUIRE_REALWORLD=1
fi

cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace
# Every decoder that reads network or file input, a million mutated inputs each (fuzz/; about 4
# minutes on 2 cores after its build). FABRICDOCTOR_FUZZ_INPUTS=N changes the count.
cargo run --quiet --profile fuzz -p fabricdoctor-fuzz -- --inputs "${FABRICDOCTOR_FUZZ_INPUTS:-1000000}"
