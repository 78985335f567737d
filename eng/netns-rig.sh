#!/usr/bin/env bash
# Hosts of their own on one Linux machine: one network namespace per host, each with an address
# 10.77.<subnet>.<i+1>/24 on a bridge that lives in a switch namespace of its own, so nothing of
# the machine's own networking changes. The distributed tests build the same rig
# (tests/CspNet.Remote.Tests/MultiHost); this script is for trying things by hand. Needs root and
# iproute2.
#
#   sudo bash eng/netns-rig.sh up 3 [SUBNET]   hosts cspnet-h0..h2 (SUBNET default 1)
#   sudo bash eng/netns-rig.sh exec 1 CMD...   run CMD on host 1 (e.g. the NameServer, a program)
#   sudo bash eng/netns-rig.sh cut 2           unplug host 2's cable (packets vanish, nothing is told)
#   sudo bash eng/netns-rig.sh restore 2       plug it back in
#   sudo bash eng/netns-rig.sh rate 2 1gbit    limit host 2's link with tc tbf (rate off: no limit)
#   sudo bash eng/netns-rig.sh down            kill what runs on the hosts and remove them
set -euo pipefail
prefix=${CSPNET_RIG_PREFIX:-cspnet}
switch="$prefix-sw"

hosts() { ip netns list | awk '{print $1}' | grep -E "^$prefix-h[0-9]+$" || true; }

case "${1:-}" in
  up)
    count=${2:?how many hosts}
    subnet=${3:-1}
    ip netns add "$switch"
    ip -n "$switch" link add br0 type bridge
    ip -n "$switch" link set br0 up
    for ((i = 0; i < count; i++)); do
      ns="$prefix-h$i"
      ip netns add "$ns"
      ip link add eth0 netns "$ns" type veth peer name "p$i" netns "$switch"
      ip -n "$switch" link set "p$i" master br0
      ip -n "$switch" link set "p$i" up
      ip -n "$ns" addr add "10.77.$subnet.$((i + 1))/24" dev eth0
      ip -n "$ns" link set eth0 up
      ip -n "$ns" link set lo up
      echo "$ns 10.77.$subnet.$((i + 1))"
    done
    ;;
  exec)
    host=${2:?which host}
    shift 2
    exec ip netns exec "$prefix-h$host" "$@"
    ;;
  cut) ip -n "$switch" link set "p${2:?which host}" down ;;
  restore) ip -n "$switch" link set "p${2:?which host}" up ;;
  rate)
    host=${2:?which host}
    rate=${3:?rate such as 1gbit or off}
    ip netns exec "$prefix-h$host" tc qdisc del dev eth0 root 2>/dev/null || true
    if [ "$rate" != off ]; then
      # A token bucket as deep as a few milliseconds of the rate, as on a real link.
      ip netns exec "$prefix-h$host" tc qdisc add dev eth0 root tbf rate "$rate" burst 1mb latency 10ms
    fi
    ;;
  down)
    for ns in $(hosts) "$switch"; do
      pids=$(ip netns pids "$ns" 2>/dev/null || true)
      [ -n "$pids" ] && kill -9 $pids 2>/dev/null || true
      ip netns del "$ns" 2>/dev/null || true
    done
    ;;
  *)
    sed -n '2,16p' "$0"
    exit 2
    ;;
esac
