#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/man/build.sh BINDIR OUTDIR - `make man`: the man pages, written by help2man from each
# binary's own `--help` and `--version`, so a page cannot disagree with its binary; the
# docs/man/*.h2m include files add only what --help does not say (ENVIRONMENT, FILES, SEE ALSO).
#   OUTDIR/kt-webhook.8 kt-reconciler.8   section 8, system administration commands: daemons
#                                          that a Deployment or a service manager starts
#   OUTDIR/ktctl.1 ktctl-SUB.1             section 1, user commands: one page per subcommand
#                                          that `ktctl --help` lists under "commands:"
# The date in the footer is the last commit's (SOURCE_DATE_EPOCH), so the pages are reproducible.
# Needs help2man (`make deps`). Pages are build output: never edit or commit them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bindir=$(cd "${1:?usage: docs/man/build.sh BINDIR OUTDIR}" && pwd)
out=${2:?usage: docs/man/build.sh BINDIR OUTDIR}
command -v help2man >/dev/null || {
    echo "man: help2man missing (make deps installs it)" >&2
    exit 1
}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$here" log -1 --format=%ct 2>/dev/null || date +%s)}
mkdir -p "$out"
rm -f "$out"/*.1 "$out"/*.8 # a page of a subcommand that is gone must not stay
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# page NAME SECTION WHAT EXE VERSION INCLUDE...: help2man of EXE into OUTDIR/NAME.SECTION; the
# footer's source is the first two words of VERSION (e.g. "ktctl 0.1.0").
page() {
    local name=$1 sec=$2 what=$3 exe=$4 ver=$5 inc=()
    shift 5
    for f in "$@"; do inc+=(--include "$f"); done
    help2man --no-info --section "$sec" --name "$what" \
        --version-string "$ver" --source "$(echo "$ver" | sed -n 1p | cut -d' ' -f1-2)" \
        "${inc[@]}" --output "$out/$name.$sec" "$exe"
}

for d in kt-webhook kt-reconciler; do
    case $d in
    kt-webhook) what="admission webhooks of the Kubeflow Trainer v2 control plane" ;;
    kt-reconciler) what="TrainJob controller of the Kubeflow Trainer v2 control plane" ;;
    esac
    page "$d" 8 "$what" "$bindir/$d" "$("$bindir/$d" --version)" "$here/$d.h2m"
done

ver=$("$bindir/ktctl" --version)
subs=$("$bindir/ktctl" --help | sed -n '/^commands:$/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
[ -n "$subs" ] || {
    echo "man: no subcommands under \"commands:\" in ktctl --help" >&2
    exit 1
}
printf '[SEE ALSO]\n' >"$tmp/ktctl-subs.h2m"
for s in $subs; do
    printf '.BR ktctl\\-%s (1),\n' "$s" >>"$tmp/ktctl-subs.h2m"
    case $s in
    validate) what="check TrainJobs and training runtimes as the API server and kt-webhook would" ;;
    render) what="print the objects kt-reconciler would apply for a TrainJob" ;;
    certs) what="issue the CA and the serving certificate of kt-webhook" ;;
    status) what="one view of a TrainJob and what it waits for" ;;
    *) what="the ktctl $s subcommand" ;;
    esac
    # help2man runs the program it is given: a two-line ktctl-SUB that runs `ktctl SUB`.
    printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$bindir/ktctl" "$s" >"$tmp/ktctl-$s"
    chmod +x "$tmp/ktctl-$s"
    page "ktctl-$s" 1 "$what" "$tmp/ktctl-$s" "ktctl-$s ${ver#ktctl }" "$here/ktctl-subcommand.h2m"
done
page ktctl 1 "check, render and inspect Kubeflow Trainer v2 objects; issue kt-webhook's certificates" \
    "$bindir/ktctl" "$ver" "$tmp/ktctl-subs.h2m" "$here/ktctl.h2m"
echo "man: $(cd "$out" && ls | tr '\n' ' ')in $out"
