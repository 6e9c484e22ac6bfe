# rxe-harness.sh - the guest-side part of the harness wrappers (run-topology-guest.sh,
# run-ring-guests.sh): appended to a wrapper that first sets RXE_MAC and RXE_IP. Gives the NIC with
# MAC $RXE_MAC the address $RXE_IP/24 before `rdma link add` (the kernel fills the GID table from
# inet events, drivers/infiniband/core/roce_gid_mgmt.c), waits until the IPv4-mapped RoCE v2 GID is
# in the table (asynchronously filled), then runs script.sh from the share with FD_VM_OUT, FD_VM_BIN,
# FD_VM_RXE_NETDEV, FD_VM_RXE_IP and FD_VM_RXE_GID_INDEX set. Exit code: script.sh's; 90 when rxe0
# could not be set up.
echo "fd-harness: start at $(cut -d' ' -f1 /proc/uptime)s, kernel $(uname -r)"
fail() { echo "fd-harness: rxe setup failed: $*"; exit 90; }
modprobe -a rdma_rxe ib_uverbs rdma_ucm ib_umad || fail "modprobe"
IF=
for n in /sys/class/net/*; do
  [ "$(cat "$n/address")" = "$RXE_MAC" ] && IF=${n##*/}
done
[ -n "$IF" ] || fail "no netdev with MAC $RXE_MAC"
ip link set "$IF" up || fail "ip link set $IF up"
ip addr add "$RXE_IP/24" dev "$IF" || fail "ip addr add"
rdma link add rxe0 type rxe netdev "$IF" || fail "rdma link add rxe0 type rxe netdev $IF"
# RoCE v2 GID of an IPv4 address = ::ffff:a.b.c.d; sysfs prints it as 8 groups of 4 hex digits
# shellcheck disable=SC2046  # the four octets are meant to be split
want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' $(echo "$RXE_IP" | tr . ' '))
GIDIDX=
for _ in $(seq 1 100); do
  for g in /sys/class/infiniband/rxe0/ports/1/gids/*; do
    if [ "$(cat "$g" 2>/dev/null)" = "$want" ] &&
       [ "$(cat "/sys/class/infiniband/rxe0/ports/1/gid_attrs/types/${g##*/}" 2>/dev/null)" = "RoCE v2" ]; then
      GIDIDX=${g##*/}; break 2
    fi
  done
  sleep 0.2
done
[ -n "$GIDIDX" ] || fail "no RoCE v2 GID $want on rxe0 port 1 after 20 s"
echo "fd-harness: rxe0 on $IF ($RXE_IP), RoCE v2 GID index $GIDIDX"
export FD_VM_OUT=/mnt/host/out FD_VM_BIN=/mnt/host/bin FD_VM_RXE_NETDEV=$IF FD_VM_RXE_IP=$RXE_IP \
       FD_VM_RXE_GID_INDEX=$GIDIDX PATH=/mnt/host/bin:$PATH
# What every guest script checks first, shared: the fabricdoctor binary from the share, and rxe0.
# Exit 3 (no RDMA device) is what the host tests turn into a failure, never a pass.
fd_require_rxe0() {
  command -v fabricdoctor > /dev/null ||
    { echo "no fabricdoctor in the share: pass --copy target/debug/fabricdoctor" >&2; exit 2; }
  if ! ibv_devices 2> /dev/null | grep -q rxe0; then
    echo "$1: $(cut -d' ' -f1 /proc/uptime)s no RDMA device: ibv_devices lists no rxe0"
    ibv_devices > "$FD_VM_OUT/no-device.txt" 2>&1
    exit 3
  fi
}
export -f fd_require_rxe0
echo "fd-harness: running script.sh at $(cut -d' ' -f1 /proc/uptime)s"
cd /mnt/host || exit 90
bash ./script.sh
rc=$?
echo "fd-harness: script.sh exit code $rc at $(cut -d' ' -f1 /proc/uptime)s"
sync
exit $rc
