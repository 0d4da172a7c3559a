#!/bin/sh
# finish-rootfs.sh is the last step of the runtime root filesystem, run inside it as root after the packages of
# image/packages.txt are installed: by the Dockerfile's runtime-base stage and by hack/image.sh (an mmdebstrap
# customize hook), so that both builds end alike.
set -eu

# Debian installs lldpcli setuid _lldpd, group adm, mode 4750 (a dpkg statoverride), for users outside the
# _lldpd group. In the image it must run as whoever the pod runs as: the agent runs as uid 0 with every
# capability dropped but NET_RAW, so it may not execute a file of another owner that is closed to others, and
# it reaches the host lldpd's socket through the socket's group (the chart's agent.lldpd.socketGroup).
if dpkg-statoverride --list /usr/sbin/lldpcli >/dev/null; then
  dpkg-statoverride --remove /usr/sbin/lldpcli
fi
chown root:root /usr/sbin/lldpcli
chmod 0755 /usr/sbin/lldpcli

# Time-zone data (about 4 MB): the binaries and the tools work in UTC. Only /etc/localtime's target stays
# (removed here, not by a dpkg filter: tzdata's own setup needs the data while it installs).
if [ -d /usr/share/zoneinfo ]; then
  find /usr/share/zoneinfo -mindepth 1 ! -path /usr/share/zoneinfo/Etc ! -path /usr/share/zoneinfo/Etc/UTC \
    ! -path /usr/share/zoneinfo/UTC \( -type f -o -type l \) -delete
  find /usr/share/zoneinfo -mindepth 1 -type d -empty -delete
fi

# Libraries that only the lldpd daemon and the full perl binary load (about 12 MB): the image runs lldpcli
# against the host's lldpd and ibnetdiscover, whose libraries are libxml2 with libicuuc/libicudata,
# liblldpctl, libreadline, libbsd and the InfiniBand ones; nothing in it starts lldpd, SNMP or Perl scripts
# (perl-base's /usr/bin/perl, which dpkg's tools use, is built without libperl and stays). The daemon itself
# goes with them rather than stay as a binary that cannot load. ICU's i18n, io and tools libraries are not
# loaded by libxml2 either.
rm -f /usr/sbin/lldpd /usr/bin/perl5.*-*-linux-gnu
for lib in libperl.so libnetsnmp libsnmp.so libicui18n.so libicuio.so libicutu.so; do
  rm -f /usr/lib/*-linux-gnu/"$lib"*
done
rm -rf /usr/share/snmp /var/cache/debconf/*-old
