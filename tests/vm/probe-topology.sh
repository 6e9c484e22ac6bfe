#!/usr/bin/env bash
# probe-topology.sh - GUEST-side script for run-topology-guest.sh: records what the real kernel shows
# of the emulated PCIe topology and of Soft-RoCE into $FD_VM_OUT (-> OUTDIR on the host), then checks
# the properties fabricdoctor's probes rely on. Exit code 0 = all checks passed, 1 = a check failed.
#
#   tests/vm/run-topology-guest.sh tests/vm/probe-topology.sh /tmp/probe-out
#
# It needs no fabricdoctor binary; it is the ground truth that fabricdoctor's own snapshot/probes can
# be compared with (run `fabricdoctor snapshot` in a script like this one, via --copy).
set -euo pipefail
O=${FD_VM_OUT:?run me through tests/vm/run-topology-guest.sh}
cd "$O"
t() { echo "probe: [$(cut -d' ' -f1 /proc/uptime)s] $*"; }
t start

# ------------------------------------------------------------------------------------ raw records
{ uname -a; lspci --version; rdma -V
  dpkg-query -W -f '${Package} ${Version}\n' pciutils pci.ids rdma-core ibverbs-providers iproute2; } > versions.txt
cat /proc/cmdline > cmdline.txt
t lspci
lspci -tv > lspci-tv.txt
lspci -vvv > lspci-vvv.txt
lspci -nn > lspci-nn.txt
# -xxxx: the full 4096-byte config space of every function (extended space needs root; PID-1's
# children are root). Conventional-PCI functions (everything on pcie.0, virtio-9p included) have
# 256 bytes only and lspci prints just those.
lspci -xxxx > lspci-xxxx.txt
ls -l /sys/bus/pci/devices/ > sys-bus-pci-devices.txt

t sysfs
# One line per PCI function: the sysfs attributes the probes read. Missing attributes print "-"
# (conventional PCI functions have no link attributes at all).
attr() { cat "$1" 2> /dev/null || echo -; }
{
  printf '%s\t' bdf class vendor device numa_node local_cpulist max_link_speed max_link_width \
    current_link_speed current_link_width driver; printf 'path\n'
  for d in /sys/bus/pci/devices/*; do
    drv=-; [ -e "$d/driver" ] && drv=$(basename "$(readlink "$d/driver")")
    printf '%s\t' "${d##*/}" "$(attr "$d/class")" "$(attr "$d/vendor")" "$(attr "$d/device")" \
      "$(attr "$d/numa_node")" "$(attr "$d/local_cpulist")" "$(attr "$d/max_link_speed")" \
      "$(attr "$d/max_link_width")" "$(attr "$d/current_link_speed")" "$(attr "$d/current_link_width")" "$drv"
    readlink -f "$d"
  done
} > pci-attrs.tsv

# NUMA as the guest kernel sees it
for n in /sys/devices/system/node/node*; do
  echo "${n##*/} cpulist=$(cat "$n/cpulist") distance=$(cat "$n/distance")"
done > numa.txt

t rdma
# RDMA / Soft-RoCE
{
  echo "### rdma link"; rdma link show
  echo "### rdma dev"; rdma dev show
  echo "### ibv_devices"; ibv_devices
  echo "### ibstat"; ibstat || true
} > rdma.txt 2>&1
ibv_devinfo -v > ibv_devinfo-v.txt 2>&1
ls -lR /sys/class/infiniband/ > ls-lR-sys-class-infiniband.txt
ls -lR /sys/class/infiniband/rxe0/ > ls-lR-rxe0.txt   # trailing slash: follow the class symlink
readlink -f /sys/class/infiniband/rxe0 > rxe0-realpath.txt
# GID table, all 1024 entries of port 1 (empty ones read as ::), and the attributes of the
# non-empty ones (types/N and ndevs/N of an empty entry fail with EINVAL: not an error of the node)
P=/sys/class/infiniband/rxe0/ports/1
# shellcheck disable=SC2012  # the entries are named 0..1023
for g in $(ls "$P/gids" | sort -n); do
  read -r gid < "$P/gids/$g"   # builtin read, not cat: 1024 forks cost ~10 s under TCG
  [ "$gid" = 0000:0000:0000:0000:0000:0000:0000:0000 ] && continue
  printf '%s\t%s\t%s\t%s\n' "$g" "$gid" "$(cat "$P/gid_attrs/types/$g" 2>&1)" "$(cat "$P/gid_attrs/ndevs/$g" 2>&1)"
done > rxe0-gids.tsv
for f in node_type node_guid sys_image_guid fw_ver hw_rev parent ports/1/state ports/1/phys_state \
         ports/1/rate ports/1/link_layer ports/1/lid ports/1/gid_attrs/types/0; do
  printf '%s: %s\n' "$f" "$(cat "/sys/class/infiniband/rxe0/$f" 2>&1)"
done > rxe0-attrs.txt

t net
# networking
{ ip -d link show; ip -br addr show; for n in /sys/class/net/*; do
    i=${n##*/}; [ "$i" = lo ] && continue
    echo "### $i -> $(readlink -f "$n/device" 2>/dev/null || echo none)"; ethtool -i "$i" 2>&1 || true
  done; } > net.txt
dmesg > dmesg.txt

t checks
# ------------------------------------------------------------------------------------ checks
check() { # check DESCRIPTION COMMAND... : runs COMMAND, records PASS/FAIL
  local what=$1; shift
  if "$@"; then echo "PASS $what"; else echo "FAIL $what"; fi
}
hostbridge_of() { readlink -f "/sys/bus/pci/devices/$1" | cut -d/ -f4; }   # -> pci0000:40
numa_under() { # every function below host bridge $1 has numa_node $2
  local d n ok=0 seen=0
  for d in /sys/bus/pci/devices/*; do
    [ "$(hostbridge_of "${d##*/}")" = "pci0000:$1" ] || continue
    seen=1; n=$(cat "$d/numa_node")
    [ "$n" = "$2" ] || { echo "  ${d##*/}: numa_node $n, expected $2"; ok=1; }
  done
  [ "$seen" = 1 ] && return $ok
}
link_is() { # link_is BDF max_speed max_width
  local d=/sys/bus/pci/devices/0000:$1
  if [ "$(cat "$d/max_link_speed")" != "$2" ] || [ "$(cat "$d/max_link_width")" != "$3" ]; then
    echo "  $1: max $(cat "$d/max_link_speed") x$(cat "$d/max_link_width"), expected $2 x$3"; return 1
  fi
}
# (no `grep -q` after a pipe: it may quit early, SIGPIPE the writer, and pipefail reports that)
# a function's block in lspci output starts with its "BB:DD.F " header line (hex dump rows like
# "ff0:" must not be taken for one)
block_of() { awk -v b="$1" '$1 ~ /^[0-9a-f][0-9a-f]:[0-9a-f][0-9a-f]\.[0-7]$/ {on=($1==b)} on' "$2"; }
lnkcap_in_lspci() { # the root port's LnkCap line in lspci -vvv shows the same speed/width
  block_of "$1" lspci-vvv.txt | grep 'LnkCap:' | grep "Speed $2, Width x$3" > /dev/null
}
same_switch() { # the parents of $1 and $2 (downstream ports) share their parent (upstream port)
  local a b
  a=$(readlink -f "/sys/bus/pci/devices/0000:$1/../.."); b=$(readlink -f "/sys/bus/pci/devices/0000:$2/../..")
  [ "$a" = "$b" ] && [ "$(cat "$a/class")" = 0x060400 ]
}
has_roce_v2_gid() { grep -qP "\t0000:0000:0000:0000:0000:ffff:0a4d:0002\tRoCE v2\t" rxe0-gids.tsv; }
full_config() { # lspci -xxxx printed 4096 bytes (last row ff0:) for this PCIe function
  block_of "$1" lspci-xxxx.txt | grep '^ff0:' > /dev/null
}
{
  check "devices below pxb bus 0x40 have numa_node 0" numa_under 40 0
  check "devices below pxb bus 0x60 have numa_node 0" numa_under 60 0
  check "devices below pxb bus 0x80 have numa_node 1" numa_under 80 1
  check "devices on pcie.0 have numa_node -1" numa_under 00 -1
  check "root port 40:00.0 max link 16.0 GT/s x16" link_is 40:00.0 "16.0 GT/s PCIe" 16
  check "root port 40:01.0 max link 8.0 GT/s x2 (narrow)" link_is 40:01.0 "8.0 GT/s PCIe" 2
  check "root port 60:00.0 max link 16.0 GT/s x16" link_is 60:00.0 "16.0 GT/s PCIe" 16
  check "root port 80:00.0 max link 32.0 GT/s x16" link_is 80:00.0 "32.0 GT/s PCIe" 16
  check "root port 80:01.0 max link 16.0 GT/s x8" link_is 80:01.0 "16.0 GT/s PCIe" 8
  check "lspci LnkCap of 40:01.0 says 8GT/s x2" lnkcap_in_lspci 40:01.0 8GT/s 2
  check "lspci LnkCap of 80:00.0 says 32GT/s x16" lnkcap_in_lspci 80:00.0 32GT/s 16
  check "XIO3130 downstream port 42:00.0 max_link_speed reads Unknown" \
    test "$(cat /sys/bus/pci/devices/0000:42:00.0/max_link_speed)" = Unknown
  check "endpoint 43:00.0 (e1000e) max link 2.5 GT/s x1" link_is 43:00.0 "2.5 GT/s PCIe" 1
  check "e1000e 43:00.0 and nvme 44:00.0 sit below one switch upstream port (PIX)" \
    same_switch 43:00.0 44:00.0
  # config space says TotalVFs 8, but the igb driver caps 82576 at 7 (pci_sriov_set_totalvfs)
  check "igb 81:00.0 offers SR-IOV (sysfs sriov_totalvfs 7, capability TotalVFs 8)" \
    test "$(cat /sys/bus/pci/devices/0000:81:00.0/sriov_totalvfs 2>&1)" = 7
  check "rxe0 exists" test -d /sys/class/infiniband/rxe0
  check "rxe0 has RoCE v2 GID ::ffff:10.77.0.2" has_roce_v2_gid
  check "rxe0 has no device link (virtual)" test ! -e /sys/class/infiniband/rxe0/device
  check "rxe0 port 1 is ACTIVE" grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state
  check "lspci -xxxx gives 4096 bytes for root port 40:00.0" full_config 40:00.0
  check "lspci -xxxx gives 4096 bytes for endpoint 81:00.0 (igb)" full_config 81:00.0
} | tee checks.txt
FAILS=$(grep -c '^FAIL' checks.txt || true)
echo "$FAILS check(s) failed"
[ "$FAILS" = 0 ]
