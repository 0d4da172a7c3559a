# syntax=docker/dockerfile:1
# fabricmap's container image: fabricmap-agent, fabricmap-aggregator, fabricmap-placer, fabricmap-scheduler
# (kube-scheduler with fabricmap's plugins, from the scheduler/ module) and the fabricmap CLI in /usr/local/bin,
# on Debian bookworm with what the agent's probes run (ibnetdiscover, lldpcli).
#
#   docker build --build-arg VERSION=0.1.0 --build-arg REVISION=$(git rev-parse HEAD) \
#     -t ghcr.io/fabricmap/fabricmap:0.1.0 .
#
# `make image` builds the same image offline (hack/image.sh): the same package list (image/packages.txt),
# the same dpkg filters (image/dpkg-excludes), the same binary build (hack/image/build-binaries.sh), and the
# configuration of the final stage below, which the offline writer reads from this file. Keep the final stage
# to ARG, ENV, LABEL, USER, WORKDIR, ENTRYPOINT, CMD and COPY: the offline writer refuses anything else there.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
COPY scheduler/go.mod scheduler/go.sum scheduler/
RUN go mod download && cd scheduler && go mod download
COPY . .
ARG VERSION=dev
ARG REVISION=unknown
RUN VERSION="${VERSION}" REVISION="${REVISION}" hack/image/build-binaries.sh /out

# The runtime's root filesystem: bookworm-slim plus the packages of image/packages.txt, finished by
# image/finish-rootfs.sh. Offline, mmdebstrap
# makes this stage's filesystem (minbase with the same packages and filters).
FROM debian:bookworm-slim AS runtime-base
ARG DEBIAN_FRONTEND=noninteractive
COPY image/dpkg-excludes /etc/dpkg/dpkg.cfg.d/fabricmap-excludes
COPY image/packages.txt image/finish-rootfs.sh /tmp/fabricmap/
RUN apt-get update \
 && sed -e 's/#.*//' /tmp/fabricmap/packages.txt | xargs apt-get install -y --no-install-recommends \
 && sh /tmp/fabricmap/finish-rootfs.sh \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /tmp/fabricmap

FROM runtime-base
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.source="https://github.com/fabricmap/fabricmap" \
      org.opencontainers.image.title="fabricmap" \
      org.opencontainers.image.description="Discovers the network topology of a GPU cluster and publishes it as Volcano HyperNodes" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
COPY --from=build /out/ /usr/local/bin/
COPY LICENSE /usr/share/doc/fabricmap/LICENSE
# Not root. The agent's DaemonSet sets what it needs (it reads /sys and may open InfiniBand MADs).
USER 65532:65532
WORKDIR /
ENTRYPOINT ["/usr/local/bin/fabricmap"]
CMD ["--help"]
