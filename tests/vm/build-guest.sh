#!/usr/bin/env bash
# build-guest.sh - build (once, cached) the QEMU guest that fabricdoctor's VM tests boot:
# Debian 12's stock 6.1 kernel (it has rdma_rxe = Soft-RoCE, which this machine's own kernel lacks)
# and an initramfs root filesystem with rdma-core, ibverbs-utils, pciutils, iproute2, ...
#
#   sudo tests/vm/build-guest.sh          # as root on a Debian 12 (bookworm) host
#
# Everything large goes to the cache dir ${FABRICDOCTOR_VM_CACHE:-/var/tmp/fabricdoctor-vm}, never into
# the repository. Each step is skipped when its output for the same inputs is already there, so a
# second run takes about a second. Afterwards run tests/vm/run-topology-guest.sh.
#
# Steps (durations are appended to $CACHE/timings.txt):
#   1. host packages  qemu-system-x86 from bookworm-backports (so it matches the 10.0.x qemu-utils these
#                     machines come with instead of replacing it), mmdebstrap, cpio. A private apt
#                     configuration (own sources list and lists dir under $CACHE/apt) adds backports
#                     without touching /etc/apt, and a concurrent `apt-get update` elsewhere cannot
#                     drop the backports lists under our feet.
#   2. kernel         `apt-get download` of linux-image-6.1.0-*-amd64 (the generic flavour: the -cloud
#                     one has neither rdma_rxe nor 9p), unpacked with dpkg-deb -x; nothing is installed.
#   3. base rootfs    mmdebstrap --variant=essential + the guest packages, as a tarball.
#   4. initramfs      base rootfs + the dependency closure of the kernel modules the guest needs + /init,
#                     packed as one uncompressed newc cpio (the whole root lives in guest RAM; no disk).
#
# Env knobs:
#   FABRICDOCTOR_VM_CACHE=DIR  cache dir (default /var/tmp/fabricdoctor-vm)
#   KPKG=linux-image-6.1.0-NN-amd64  pin the kernel package (default: the one linux-image-amd64 depends on,
#                              chosen on the first run and then kept until FD_VM_REFRESH=1)
#   MIRROR=URL SECMIRROR=URL   Debian mirrors (default: taken from this machine's apt configuration)
#   FD_VM_REFRESH=1            re-resolve the kernel package and rebuild everything (apt lists updated)
#   SKIP_APT=1                 never install host packages (fail if missing)
#
# Background and the facts this relies on: /work/shared/softroce/README.md and recipe.sh (Soft-RoCE
# recipe this harness was derived from).
set -euo pipefail

SELF=$(readlink -f "${BASH_SOURCE[0]}")
die() { echo "build-guest.sh: error: $*" >&2; exit 1; }
log() { echo "build-guest.sh: $*"; }

[ "$(id -u)" = 0 ] || die "must run as root (it installs packages with apt-get and runs mmdebstrap/chroot)"
[ -r /etc/os-release ] || die "no /etc/os-release: this script supports Debian 12 (bookworm) hosts only"
# shellcheck disable=SC1091
. /etc/os-release
if [ "${ID:-}" != debian ] || [ "${VERSION_CODENAME:-}" != bookworm ]; then
  die "host is ${PRETTY_NAME:-unknown}; this script supports Debian 12 (bookworm) hosts only"
fi
[ "$(dpkg --print-architecture)" = amd64 ] || die "host architecture must be amd64"

CACHE=${FABRICDOCTOR_VM_CACHE:-/var/tmp/fabricdoctor-vm}
mkdir -p "$CACHE"
CACHE=$(readlink -f "$CACHE")
# One build at a time per cache dir (run-topology-guest.sh takes the same lock, shared, while it
# copies the initramfs, so a rebuild never swaps files under a starting guest).
exec 9> "$CACHE/.lock"
flock -w 1800 9 || die "could not lock $CACHE/.lock within 30 min (another build running?)"

TIMINGS=$CACHE/timings.txt
step_begin() { STEP=$1; STEP_T0=$(date +%s%N); log "== $STEP"; }
step_end() { # $1 = done|skipped
  local ms=$(( ($(date +%s%N) - STEP_T0) / 1000000 ))
  printf '%s  %-16s %-8s %5d.%01d s\n' "$(date -u +%FT%TZ)" "$STEP" "$1" $((ms / 1000)) $((ms % 1000 / 100)) |
    tee -a "$TIMINGS"
}
key_of() { sha256sum | cut -c1-16; }   # short content hash of stdin, used as cache key

# Mirrors from the machine's own apt configuration (deb822 .sources first, then sources.list), so
# this script names no host itself; override with MIRROR= / SECMIRROR=.
MIRROR=${MIRROR:-$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)}
[ -n "$MIRROR" ] || MIRROR=$(awk '/^deb / && $0 !~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
SECMIRROR=${SECMIRROR:-$(awk '/^URIs:/ && $2 ~ /security/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)}
[ -n "$SECMIRROR" ] || SECMIRROR=$(awk '/^deb / && $0 ~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$MIRROR" ] || die "no Debian mirror found in /etc/apt; set MIRROR=http://deb.debian.org/debian"
[ -n "$SECMIRROR" ] || SECMIRROR=${MIRROR%/debian}/debian-security

APTDIR=$CACHE/apt
mkdir -p "$APTDIR/lists/partial"
cat > "$APTDIR/sources.list.new" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb $SECMIRROR bookworm-security main
deb $MIRROR bookworm-backports main
EOF
mv "$APTDIR/sources.list.new" "$APTDIR/sources.list"
APTO=(-o Dir::Etc::SourceList="$APTDIR/sources.list" -o Dir::Etc::SourceParts=/nonexistent
      -o Dir::State::Lists="$APTDIR/lists" -o DPkg::Lock::Timeout=600 -o Acquire::Retries=3)
apt_lists_ready=0
apt_update() { # once per run, and only when something actually needs the package lists
  [ "$apt_lists_ready" = 1 ] && return 0
  log "apt-get update (private lists in $APTDIR/lists)"
  apt-get "${APTO[@]}" update -q > "$CACHE/apt-update.log" 2>&1 ||
    { tail -n 20 "$CACHE/apt-update.log" >&2; die "apt-get update failed (log: $CACHE/apt-update.log)"; }
  apt_lists_ready=1
}
have_lists() { compgen -G "$APTDIR/lists/*_Packages" > /dev/null; }
[ "${FD_VM_REFRESH:-0}" = 1 ] && apt_update

################################################################################ 1. host packages
step_begin "1 host-packages"
missing=()
command -v qemu-system-x86_64 > /dev/null || missing+=(qemu-system-x86)
command -v mmdebstrap > /dev/null || missing+=(mmdebstrap)
command -v cpio > /dev/null || missing+=(cpio)
if [ ${#missing[@]} -eq 0 ]; then
  step_end "skipped"
else
  [ "${SKIP_APT:-0}" = 1 ] && die "missing host packages: ${missing[*]} (and SKIP_APT=1)"
  apt_update
  # -t bookworm-backports: qemu-system-x86 10.0.x must match the preinstalled qemu-utils
  # 10.0.x~bpo12 (bookworm's 7.2 would want to downgrade/remove it); mmdebstrap from there too
  # (tested with 1.5.x). Recommends are skipped: we need neither ipxe ROMs (NICs get romfile=) nor
  # the GUI bits.
  log "installing: qemu-system-x86 mmdebstrap cpio"
  DEBIAN_FRONTEND=noninteractive apt-get "${APTO[@]}" install -y -q --no-install-recommends \
    -t bookworm-backports qemu-system-x86 mmdebstrap cpio > "$CACHE/apt-install.log" 2>&1 ||
    { tail -n 30 "$CACHE/apt-install.log" >&2; die "apt-get install failed (log: $CACHE/apt-install.log)"; }
  step_end "done"
fi
QEMU_VER=$(qemu-system-x86_64 --version | sed -n '1s/.*version \([0-9.]*\).*/\1/p')
# pxb-pcie, x3130/xio3130, pcie-root-port x-speed/x-width (QEMU >= 4.0) and an nvme controller without
# a drive (>= 6.0) are all needed; bookworm-backports has 10.0.
[ "${QEMU_VER%%.*}" -ge 7 ] 2>/dev/null || die "qemu-system-x86_64 $QEMU_VER is too old (need >= 7)"
log "qemu-system-x86_64 $QEMU_VER, mmdebstrap $(mmdebstrap --version | awk '{print $2}')"

################################################################################ 2. kernel
step_begin "2 kernel"
if [ -n "${KPKG:-}" ]; then
  :
elif [ "${FD_VM_REFRESH:-0}" != 1 ] && [ -s "$CACHE/kernel.pkg" ]; then
  KPKG=$(cat "$CACHE/kernel.pkg")   # keep the kernel chosen on the first run: stable fixtures
else
  have_lists || apt_update
  KPKG=$(apt-cache "${APTO[@]}" depends linux-image-amd64 2>/dev/null |
         awk '/Depends: linux-image-[0-9]/{print $2; exit}')
  [ -n "$KPKG" ] || die "could not resolve linux-image-amd64 to a kernel package"
fi
case "$KPKG" in linux-image-6.1.*-amd64) ;; *) die "KPKG=$KPKG: expected linux-image-6.1.*-amd64 (bookworm)";; esac
KV=${KPKG#linux-image-}
KDIR=$CACHE/kernel/$KV
if [ -f "$KDIR/.unpacked" ]; then
  step_end "skipped"
else
  mkdir -p "$CACHE/debs"
  if ! compgen -G "$CACHE/debs/${KPKG}_*.deb" > /dev/null; then
    have_lists || apt_update
    log "downloading $KPKG"
    # apt-get download runs as _apt unless the target dir is accessible to it; its
    # "unsandboxed as root" notice is harmless.
    (cd "$CACHE/debs" && apt-get "${APTO[@]}" download "$KPKG" > "$CACHE/kernel-download.log" 2>&1) || {
      apt_update  # maybe our lists were stale and the .deb is gone from the mirror
      (cd "$CACHE/debs" && apt-get "${APTO[@]}" download "$KPKG" > "$CACHE/kernel-download.log" 2>&1)
    } || { cat "$CACHE/kernel-download.log" >&2; die "could not download $KPKG"; }
  fi
  rm -rf "$KDIR.tmp"; mkdir -p "$KDIR.tmp"
  dpkg-deb -x "$(compgen -G "$CACHE/debs/${KPKG}_*.deb" | tail -n1)" "$KDIR.tmp"
  touch "$KDIR.tmp/.unpacked"   # marks a complete unpack (the .deb has no modules.dep to test for)
  rm -rf "$KDIR"; mv "$KDIR.tmp" "$KDIR"
  step_end "done"
fi
echo "$KPKG" > "$CACHE/kernel.pkg"
[ -f "$KDIR/lib/modules/$KV/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko" ] ||
  die "$KPKG has no rdma_rxe.ko (a -cloud kernel?)"
grep -qE '^CONFIG_NET_9P_VIRTIO=(y|m)' "$KDIR/boot/config-$KV" || die "$KPKG lacks virtio-9p"

################################################################################ 3. base rootfs
# Guest packages. Why each: rdma-core/ibverbs-providers (librxe user-space provider), ibverbs-utils
# (ibv_devinfo, ibv_devices), infiniband-diags (ibstat), iproute2 (`ip`, `rdma link add ... type rxe`),
# kmod (modprobe/depmod), pciutils + pci.ids (lspci -tv/-vvv/-xxxx as a reference decoder), ethtool,
# procps, mount (9p mount), perftest (ib_write_bw/ib_write_lat: the reference fabricdoctor perf is
# compared with, tests/vm/perf-guest.sh), util-linux is Essential (setsid, flock).
GUEST_PKGS=rdma-core,ibverbs-providers,ibverbs-utils,infiniband-diags,perftest,iproute2,kmod,pciutils,pci.ids,ethtool,procps,mount
BASE_KEY=$(printf '%s\n' "v1" "$GUEST_PKGS" "$MIRROR" "$SECMIRROR" | key_of)
BASE_TAR=$CACHE/rootfs-base-$BASE_KEY.tar
step_begin "3 base-rootfs"
if [ -s "$BASE_TAR" ] && [ "${FD_VM_REFRESH:-0}" != 1 ]; then
  step_end "skipped"
else
  log "mmdebstrap bookworm ($GUEST_PKGS) -> $BASE_TAR (a few minutes; log $CACHE/mmdebstrap.log)"
  rm -f "$BASE_TAR.tmp.tar"
  # docs, man pages and locales are dropped: the whole rootfs lives in the guest's RAM.
  mmdebstrap --variant=essential --include="$GUEST_PKGS" \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    bookworm "$BASE_TAR.tmp.tar" \
    "deb $MIRROR bookworm main" "deb $MIRROR bookworm-updates main" \
    "deb $SECMIRROR bookworm-security main" > "$CACHE/mmdebstrap.log" 2>&1 ||
    { tail -n 30 "$CACHE/mmdebstrap.log" >&2; die "mmdebstrap failed (log: $CACHE/mmdebstrap.log)"; }
  mv "$BASE_TAR.tmp.tar" "$BASE_TAR"
  find "$CACHE" -maxdepth 1 -name 'rootfs-base-*.tar' ! -name "$(basename "$BASE_TAR")" -delete
  step_end "done"
fi

################################################################################ 4. initramfs
# Kernel modules: only the dependency closure of these (the full tree is ~400 MB). Devices used by
# run-topology-guest.sh: virtio-net + virtio-9p (virtio_pci, virtio_net, 9pnet_virtio, 9p), e1000e,
# igb (SR-IOV capable 82576 model), nvme; RDMA: rdma_rxe, ib_uverbs (/dev/infiniband/uverbs*, needed
# by libibverbs), rdma_ucm, ib_umad (ibstat); crc32 for rxe's ICRC. PCIe port services (pcieport,
# AER, PME) and the PCI core are built in.
MODS="rdma_rxe ib_uverbs rdma_ucm ib_umad virtio_pci virtio_net virtio_blk 9pnet_virtio 9p
      e1000e igb nvme crc32_generic crc32-pclmul"

# The guest's PID 1. Kept generic: it knows nothing about the topology or rxe (that is
# run-topology-guest.sh's guest-side wrapper); it mounts the host share, loads the drivers of the
# devices present, runs the script named on the kernel command line and powers off.
read -r -d '' INIT <<'EOF' || true
#!/bin/sh
# PID 1 of the fabricdoctor test guest (written by tests/vm/build-guest.sh; no systemd, no udev).
# Mounts the host folder shared over virtio-9p (tag host0) on /mnt/host, loads drivers, runs
# `bash /mnt/host/$fd.script` with stdout+stderr in /mnt/host/$fd.script.log and its exit code in
# /mnt/host/$fd.script.rc, then powers off. Without a script it starts a shell on ttyS0.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=linux LANG=C.UTF-8
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
arg() { tr ' ' '\n' < /proc/cmdline | sed -n "s/^$1=//p" | tail -n1; }
NAME=$(arg fd.name); SCRIPT=$(arg fd.script)
hostname "${NAME:-fdguest}"
echo "init: up at $(cut -d' ' -f1 /proc/uptime)s (guest uptime)"
ip link set lo up
# Coldplug: with no udev nothing loads drivers for the devices found at boot, so load, by modalias,
# whatever of them we packed (PCI first; that creates the virtio devices, then virtio drivers).
for bus in pci virtio; do
  cat /sys/bus/$bus/devices/*/modalias 2>/dev/null | sort -u | xargs -r modprobe -qab 2>/dev/null
done
modprobe -a 9pnet_virtio 9p
mkdir -p /mnt/host
if mount -t 9p -o trans=virtio,version=9p2000.L,msize=1048576,cache=none host0 /mnt/host; then
  echo "init: host share mounted on /mnt/host"
else
  echo "init: no host share"
fi
S=/mnt/host/${SCRIPT:-guest.sh}
if [ -f "$S" ]; then
  echo "init: running $S at $(cut -d' ' -f1 /proc/uptime)s"
  (cd /mnt/host && bash "$S" > "$S.log" 2>&1; echo $? > "$S.rc")
  # the marker lets the host get the exit code from the console even if the share misbehaved
  echo "init: FD-VM-RC=$(cat "$S.rc") at $(cut -d' ' -f1 /proc/uptime)s"
else
  echo "init: no $S; shell on the console (exit it to power off)"
  setsid sh -c 'exec sh </dev/ttyS0 >/dev/ttyS0 2>&1'
fi
sync
umount /mnt/host 2>/dev/null
echo o > /proc/sysrq-trigger
sleep 10
EOF

INITRD_KEY=$(printf '%s\n' "v1" "$BASE_KEY" "$KV" "$MODS" "$INIT" | key_of)
step_begin "4 initramfs"
if [ -s "$CACHE/initrd.cpio" ] && [ -s "$CACHE/vmlinuz" ] && [ "$(cat "$CACHE/initrd.key" 2>/dev/null)" = "$INITRD_KEY" ]; then
  step_end "skipped"
else
  ST=$CACHE/stage
  rm -rf "$ST"; mkdir -p "$ST"
  tar -C "$ST" --numeric-owner -xpf "$BASE_TAR"
  # Module closure computed by the rootfs's own modprobe in a chroot, against a hard-linked copy of
  # the full module tree (same approach as recipe.sh).
  mkdir -p "$ST/tmp/k/lib/modules"
  cp -al "$KDIR/lib/modules/$KV" "$ST/tmp/k/lib/modules/"
  chroot "$ST" depmod -b /tmp/k "$KV"
  : > "$CACHE/modlist.txt"
  for m in $MODS; do
    chroot "$ST" modprobe -d /tmp/k -S "$KV" --show-depends "$m" >> "$CACHE/modlist.txt" ||
      die "module $m not found in $KPKG"
  done
  awk '$1=="insmod"{print $2}' "$CACHE/modlist.txt" | sort -u > "$CACHE/modlist.txt.tmp"
  mv "$CACHE/modlist.txt.tmp" "$CACHE/modlist.txt"
  while read -r f; do
    rel=${f#/tmp/k/}; mkdir -p "$ST/$(dirname "$rel")"; cp "$KDIR/$rel" "$ST/$rel"
  done < "$CACHE/modlist.txt"
  cp "$KDIR/lib/modules/$KV"/modules.order "$KDIR/lib/modules/$KV"/modules.builtin* "$ST/lib/modules/$KV/"
  rm -rf "$ST/tmp/k"
  chroot "$ST" depmod "$KV"
  printf '%s\n' "$INIT" > "$ST/init"
  chmod 755 "$ST/init"
  [ -s "$ST/usr/share/misc/pci.ids" ] || die "pci.ids missing from the rootfs"
  (cd "$ST" && find . -xdev -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) > "$CACHE/initrd.cpio.tmp"
  cp "$KDIR/boot/vmlinuz-$KV" "$CACHE/vmlinuz.tmp"
  mv "$CACHE/initrd.cpio.tmp" "$CACHE/initrd.cpio"
  mv "$CACHE/vmlinuz.tmp" "$CACHE/vmlinuz"
  echo "$INITRD_KEY" > "$CACHE/initrd.key"
  log "$(wc -l < "$CACHE/modlist.txt") kernel modules packed"
  rm -rf "$ST"
  step_end "done"
fi

# Facts about the build, read by run-topology-guest.sh and copied into each run's OUTDIR.
cat > "$CACHE/guest.env" <<EOF
FD_VM_KPKG=$KPKG
FD_VM_KV=$KV
FD_VM_QEMU_VERSION=$QEMU_VER
FD_VM_INITRD_KEY=$INITRD_KEY
FD_VM_BUILT_BY=$SELF
EOF

log "ready:"
log "  kernel     $CACHE/vmlinuz ($KPKG)"
log "  initramfs  $CACHE/initrd.cpio ($(du -h "$CACHE/initrd.cpio" | cut -f1), key $INITRD_KEY)"
log "  modules    $CACHE/modlist.txt"
log "  timings    $TIMINGS"
log "next: $(dirname "$SELF")/run-topology-guest.sh SCRIPT OUTDIR"
