#!/usr/bin/env bash
# tests/cluster/images/build.sh NAME... - the container images pods on the test cluster's real
# node run (no registry is reachable: all are built here). NAME is pause, torch, mpi or xgboost
# (README.md). Each is an OCI image archive made like deploy/image/build.sh's: a root filesystem
# from Debian bookworm packages by mmdebstrap (pause: one static binary), the files under
# tests/cluster/images/NAME/rootfs copied in, one layer assembled by umoci, and the index entry
# annotated io.containerd.image.name=REF so `ctr images import FILE` names it REF.
# Prints one line per NAME on stdout: `NAME REF PATH`, REF = kt.local/NAME:KEY, PATH =
# $KT_CACHE_DIR/images/NAME-KEY.oci.tar (default cache ~/.cache/kt). KEY hashes this script, the
# suite, the package list and the image's files, so an unchanged image is never rebuilt; builds
# of one image are serialized with flock. Build time and size go to stderr.
# Knobs: KT_CACHE_DIR, KT_DEBIAN_MIRROR (default: mmdebstrap's, deb.debian.org + security).
set -eEuo pipefail
trap 'echo "images: failed: line $LINENO: $BASH_COMMAND" >&2' ERR
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
SUITE=bookworm
CACHE=${KT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kt}/images

log() { echo "images: $*" >&2; }

images_usage() {
    echo "usage: $0 NAME... (pause torch mpi xgboost)" >&2
    exit 2
}

# image_pkgs NAME - the Debian packages of image NAME, comma-separated (pause: none).
image_pkgs() {
    case $1 in
    pause) echo "" ;;
    torch) echo python3,python3-torch,python3-numpy ;;
    mpi) echo openmpi-bin,openssh-server,openssh-client,python3-mpi4py,python3-numpy ;;
    xgboost) echo python3,python3-xgboost,python3-numpy ;;
    *) return 1 ;;
    esac
}

# image_stubs NAME - packages image NAME depends on but never uses, replaced by empty stubs:
# xgboost's python3-scipy depends on python3-pythran (the compiler scipy was built with), which
# brings g++, the Boost and Python headers and BLAS development files (~400 MB unpacked).
image_stubs() {
    case $1 in
    xgboost) echo python3-pythran ;;
    *) echo "" ;;
    esac
}

# stub_deb PKG DIR - build DIR/PKG.deb, an empty package PKG of a version above any Debian's.
stub_deb() {
    local d="$2/stub-$1"
    mkdir -p "$d/DEBIAN"
    printf '%s\n' "Package: $1" 'Version: 99:0-kt' 'Architecture: all' \
        'Maintainer: kt <kt@invalid>' 'Description: kt stub: a dependency the image never uses' \
        >"$d/DEBIAN/control"
    dpkg-deb --root-owner-group -Zgzip -b "$d" "$2/$1.deb" >/dev/null
}

# image_key NAME - the cache key of image NAME (12 hex digits): sha256 of this script, the
# suite, the packages, every file under NAME/ (path, executable or not, contents) and, for
# pause, the compiler version. Modes beyond the x bit are not inputs: files are copied in with
# umask 022, so a checkout's umask changes neither the key nor the image.
image_key() {
    {
        cat "$here/build.sh"
        echo "$SUITE $(image_pkgs "$1") stubs: $(image_stubs "$1")"
        (cd "$here/$1" && find . -type f \( -perm -u+x -printf '%p x\n' -o -printf '%p -\n' \) |
            LC_ALL=C sort)
        (cd "$here/$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
        if [ "$1" = pause ]; then cc --version | sed -n 1p; fi
    } | sha256sum | cut -c1-12
}

# need_tools - install the tools (Debian packages) when missing: mmdebstrap, umoci, jq, and cc
# (gcc, with the static glibc of libc6-dev) for pause.
need_tools() {
    local need="" t
    for t in mmdebstrap:mmdebstrap umoci:umoci jq:jq cc:gcc; do
        command -v "${t%%:*}" >/dev/null || need="$need ${t#*:}"
    done
    [ -f /usr/lib/x86_64-linux-gnu/libc.a ] || need="$need libc6-dev"
    [ -n "$need" ] || return 0
    log "installing$need (Debian packages)"
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null ||
        {
            $SUDO apt-get update -qq
            $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null
        }
}

# rootfs_pause DIR - the pause image's tree: /pause, the static sandbox binary, and nothing else.
rootfs_pause() {
    mkdir -p "$1"
    cc -static -O2 -s -o "$1/pause" "$here/pause/pause.c"
}

# rootfs_debian NAME DIR - mmdebstrap the packages of NAME into DIR (essential + the packages and
# their dependencies, no recommends, image_stubs as empty packages), reusing downloaded .debs
# from $CACHE/debs, then strip what a container never reads (documentation, locales, apt lists
# and caches, logs).
rootfs_debian() {
    local debs="$CACHE/debs" r=$2 mirror=() incl stub stubs="" hooks=()
    [ -n "${KT_DEBIAN_MIRROR:-}" ] && mirror=("$KT_DEBIAN_MIRROR")
    mkdir -p "$debs"
    incl=$(image_pkgs "$1")
    for stub in $(image_stubs "$1"); do
        # Under /tmp: the hook shows each .deb to dpkg in the chroot under the same path, and
        # leaves that (empty) path behind.
        [ -n "$stubs" ] || stubs=$(mktemp -d /tmp/kt-stubs.XXXXXX)
        stub_deb "$stub" "$stubs"
        incl="$incl,$stubs/$stub.deb"
        hooks=(--hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount)
    done
    mmdebstrap --quiet --mode=root --variant=essential --include="$incl" "${hooks[@]}" \
        --aptopt='Apt::Install-Recommends "false"' --format=directory \
        --skip=essential/unlink \
        --setup-hook="mkdir -p \"\$1/var/cache/apt/archives/\"" \
        --setup-hook="sync-in '$debs' /var/cache/apt/archives/" \
        --customize-hook="sync-out /var/cache/apt/archives '$debs'" \
        "$SUITE" "$r" "${mirror[@]}"
    [ -z "$stubs" ] || rm -rf "$stubs" "${r:?}$stubs"
    rm -f "$debs/lock"
    rm -rf "$debs/partial" "$r/usr/share/doc" "$r/usr/share/man" "$r/usr/share/locale" \
        "$r/usr/share/lintian" "$r/usr/share/bug" "$r/usr/share/info" "$r/var/lib/apt/lists" \
        "$r/var/cache" "$r/var/log"
    mkdir -p "$r/var/cache" "$r/var/log" "$r/tmp"
    chmod 1777 "$r/tmp"
    : >"$r/etc/resolv.conf" # the kubelet / ctr mounts its own, and /etc/hosts
    printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$r/etc/hosts"
    echo kt >"$r/etc/hostname"
}

# prune DIR - delete what no training process loads, from hard dependencies that apt cannot
# leave out: Mesa's DRI drivers (dlopened by OpenGL only; python3-torch pulls them in through
# OpenCV and Qt), the Python packages' test suites, torch's C++ test programs, then every library
# of PRUNE_LIBS that no remaining ELF file needs (libLLVM only served the DRI drivers).
PRUNE_LIBS="libLLVM-15.so.1 libz3.so.4"
prune() {
    local r=$1 lib needed again=1
    rm -rf "$r/usr/lib/x86_64-linux-gnu/dri" "$r"/usr/lib/python3/dist-packages/torch/bin/test_*
    find "$r/usr/lib/python3/dist-packages" -type d -name tests -prune -exec rm -rf {} +
    while [ "$again" = 1 ]; do
        again=0
        needed=$(find "$r/usr" -type f \( -name '*.so*' -o -perm -u+x \) -print0 |
            xargs -0 readelf -d 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort -u ||
            true) # readelf fails on the scripts among the executables
        for lib in $PRUNE_LIBS; do
            [ -e "$r/usr/lib/x86_64-linux-gnu/$lib" ] || continue
            grep -qxF "$lib" <<<"$needed" && continue
            rm -f "$r/usr/lib/x86_64-linux-gnu/$lib" "$r/usr/lib/x86_64-linux-gnu/${lib%%.so*}".so*
            again=1
        done
    done
}

# finish_mpi DIR - make sshd work in a container, for root (port 22 and 2222, /root/.ssh) and for
# the DeepSpeed/MLX runtimes' mpiuser (uid 1000, `sshd -De -f /home/mpiuser/.sshd_config`,
# port 2222, /home/mpiuser/.ssh): host keys generated now, /run/sshd, a login that sshd without
# PAM accepts (password field `*`, not the locked `!`).
finish_mpi() {
    local r=$1
    chroot "$r" ssh-keygen -A -q
    mkdir -p "$r/run/sshd" "$r/root/.ssh" "$r/etc/mpi"
    chmod 0755 "$r/run/sshd"
    chmod 0700 "$r/root/.ssh"
    echo 'mpiuser:x:1000:1000:mpiuser:/home/mpiuser:/bin/bash' >>"$r/etc/passwd"
    echo 'mpiuser:x:1000:' >>"$r/etc/group"
    echo 'mpiuser:*:19000:0:99999:7:::' >>"$r/etc/shadow"
    sed -i 's/^root:[^:]*:/root:*:/' "$r/etc/shadow"
    mkdir -p "$r/home/mpiuser/.ssh" "$r/home/mpiuser/.sshd"
    chroot "$r" ssh-keygen -q -t ed25519 -N '' -f /home/mpiuser/.sshd/ssh_host_ed25519_key
    chroot "$r" ssh-keygen -q -t ecdsa -N '' -f /home/mpiuser/.sshd/ssh_host_ecdsa_key
    chown -R 1000:1000 "$r/home/mpiuser"
    chmod 0700 "$r/home/mpiuser/.ssh" "$r/home/mpiuser/.sshd"
    printf '%s\n' "# kt: no single-copy (CMA/ptrace) in containers; ssh via kt-mpi-ssh (Secret key modes)." \
        'btl_vader_single_copy_mechanism = none' 'plm_rsh_agent = /usr/local/bin/kt-mpi-ssh' \
        >>"$r/etc/openmpi/openmpi-mca-params.conf"
}

# finish_torch DIR - Debian's python3-torch ships the torchrun console script, but on Python 3.11
# it dies in Std.from_str ('NoneType' object has no attribute 'get': iterating the IntFlag Std no
# longer yields its zero member NONE, so the default `--redirects 0` maps to None; fixed upstream
# after 1.13). Patch to_std to `return cls(int(v))` and recompile that module.
finish_torch() {
    local r=$1 f=usr/lib/python3/dist-packages/torch/distributed/elastic/multiprocessing/api.py
    [ -x "$r/usr/bin/torchrun" ] || {
        log "torch: no /usr/bin/torchrun"
        return 1
    }
    sed -i 's/^            v = int(v)$/            return cls(int(v))  # kt: Python 3.11 skips NONE/' "$r/$f"
    grep -q 'return cls(int(v))' "$r/$f" || {
        log "torch: $f: Std.from_str patch did not apply"
        return 1
    }
    chroot "$r" python3 -m py_compile "/$f"
}

# umoci_config NAME IMAGE - the image config of NAME (entrypoint/cmd, env, working directory).
umoci_config() {
    local env=(--config.env PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin)
    case $1 in
    pause)
        umoci config --image "$2" --config.entrypoint /pause --config.workingdir / \
            --config.env PATH=/ "${@:3}"
        ;;
    torch | xgboost)
        umoci config --image "$2" "${env[@]}" --config.env PYTHONUNBUFFERED=1 \
            --config.workingdir /workspace --config.cmd python3 "${@:3}"
        ;;
    mpi)
        umoci config --image "$2" "${env[@]}" --config.env PYTHONUNBUFFERED=1 \
            --config.env OMPI_ALLOW_RUN_AS_ROOT=1 --config.env OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
            --config.workingdir /workspace --config.exposedports 22/tcp \
            --config.exposedports 2222/tcp --config.cmd /usr/sbin/sshd --config.cmd -De "${@:3}"
        ;;
    *) return 1 ;;
    esac
}

# assemble NAME REF ROOTFS OUT - pack ROOTFS as the one layer of an OCI image archive OUT whose
# index names it REF (io.containerd.image.name; org.opencontainers.image.ref.name = the tag).
assemble() {
    local name=$1 ref=$2 r=$3 out=$4 w tag
    w=$(dirname "$r")
    tag=${ref##*:}
    tar --sort=name --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" --clamp-mtime -C "$r" \
        -cf "$w/rootfs.tar" .
    local L="$w/layout"
    umoci init --layout "$L"
    umoci new --image "$L:$tag"
    umoci raw add-layer --image "$L:$tag" \
        --history.created_by "tests/cluster/images/build.sh $name ($SUITE: $(image_pkgs "$name"))" \
        "$w/rootfs.tar"
    umoci_config "$name" "$L:$tag" --config.label "org.opencontainers.image.title=kt-$name" \
        --architecture amd64 --os linux \
        --created "$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)"
    umoci gc --layout "$L"
    jq -c --arg ref "$ref" '.manifests[0].annotations["io.containerd.image.name"] = $ref' \
        "$L/index.json" >"$w/index.json"
    mv "$w/index.json" "$L/index.json"
    tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
        -C "$L" -cf "$out.tmp" .
    mv "$out.tmp" "$out"
}

# copy_tree SRC DST - copy SRC's tree into DST: files 0644, or 0755 when executable in SRC; new
# directories 0755 (umask 022), whatever the checkout's modes are.
copy_tree() {
    local f
    cp -R --no-preserve=mode "$1/." "$2/"
    (cd "$1" && find . -type f -perm -u+x) | while read -r f; do chmod 0755 "$2/$f"; done
}

# build_one NAME - print `NAME REF PATH`, building the archive first unless the cache has it.
build_one() {
    local name=$1 key ref out lockfd t0 w
    image_pkgs "$name" >/dev/null || images_usage
    key=$(image_key "$name")
    ref="kt.local/$name:$key"
    out="$CACHE/$name-$key.oci.tar"
    mkdir -p "$CACHE"
    exec {lockfd}>"$CACHE/$name.lock"
    flock "$lockfd"
    if [ ! -f "$out" ]; then
        need_tools
        t0=$(date +%s)
        log "building $ref"
        w=$(mktemp -d "$CACHE/build-$name.XXXXXX")
        # shellcheck disable=SC2064 # expand $w now: it is local
        trap "rm -rf --one-file-system '$w'" EXIT
        if [ "$name" = pause ]; then
            rootfs_pause "$w/rootfs"
        else
            rootfs_debian "$name" "$w/rootfs"
            prune "$w/rootfs"
        fi
        if [ -d "$here/$name/rootfs" ]; then
            copy_tree "$here/$name/rootfs" "$w/rootfs"
        fi
        if [ "$name" = mpi ]; then finish_mpi "$w/rootfs"; fi
        if [ "$name" = torch ]; then finish_torch "$w/rootfs"; fi
        assemble "$name" "$ref" "$w/rootfs" "$out"
        rm -rf --one-file-system "$w"
        trap - EXIT
        log "built $name in $(($(date +%s) - t0)) s: $(du -h "$out" | cut -f1) ($out)"
    fi
    exec {lockfd}>&-
    echo "$name $ref $out"
}

[ $# -ge 1 ] || images_usage
umask 022
# The layer's mtimes: the last commit that touched the images (stable while the inputs are).
SOURCE_DATE_EPOCH=$(git -C "$root" log -1 --format=%ct -- tests/cluster/images 2>/dev/null || true)
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-0}
for n in "$@"; do
    build_one "$n"
done
