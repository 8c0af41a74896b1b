#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/monitoring/prom_check.py - what the e2e tier asks a real Prometheus at the end of its
run (tests/e2e/cases.sh case_prometheus). Standard library only. Each check prints
`ok NAME (figures)` or `FAIL NAME: why`; the tier counts them.

  prom_check.py targets  URL                      both daemons up over https; the negatives down
  prom_check.py panels   URL START END DASHBOARD  every panel query shows data over the run
  prom_check.py rules    URL START END            every alert rule evaluates; its inner series exist
  prom_check.py counters URL START END WATCH      lifecycle counters == the TrainJobs the API saw
  prom_check.py series   URL START END            kubeflow_trainer_ series counts, head series
  prom_check.py chart    URL START END OUT.svg    TrainJobs by state over the run, as an SVG

START and END are Unix times (the run's window). Queries are instant or range queries over
the window with STEP seconds (3); the dashboard's $__rate_interval is RATE (15s)."""
import json
import math
import re
import sys
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

from chart import svg_chart

STEP = 3
RATE = "15s"


def api(url, path, **params):
    q = urllib.parse.urlencode(params, doseq=True)
    with urllib.request.urlopen(f"{url}{path}?{q}", timeout=30) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError(f"{path}: {body.get('error')}")
    return body["data"]


def query_range(url, expr, start, end, step=STEP):
    """The result of a range query whose last step is END; raises on a query error."""
    start = float(end) - int((float(end) - float(start)) / step) * step
    return api(url, "/api/v1/query_range", query=expr, start=start, end=end, step=step)["result"]


def points(result):
    """The number of non-NaN samples in a range query result."""
    return sum(1 for s in result for _, v in s["values"] if not math.isnan(float(v)))


def instant(url, expr, t):
    return api(url, "/api/v1/query", query=expr, time=t)["result"]


def ok(name, detail=""):
    print(f"ok {name}" + (f" ({detail})" if detail else ""))


def bad(name, why):
    print(f"FAIL {name}: {why}")


# ---- targets ---------------------------------------------------------------------------------
def cmd_targets(url):
    ts = api(url, "/api/v1/targets", state="active")["activeTargets"]
    main = [t for t in ts if t["scrapePool"].startswith("serviceMonitor/")]
    for job in ("kubeflow-trainer-controller-manager-metrics", "kubeflow-trainer-controller-manager"):
        t = [x for x in main if x["labels"].get("job") == job]
        if len(t) == 1 and t[0]["health"] == "up" and t[0]["scrapeUrl"].startswith("https://"):
            ok(f"prometheus-target-up-{job}", f"{t[0]['scrapeUrl']}, last scrape {t[0]['lastScrapeDuration']:.3f}s")
        else:
            bad(f"prometheus-target-up-{job}", json.dumps(t)[:400])
    up = instant(url, 'up{job=~"kubeflow-trainer-.*"}', api_time(url))
    if len(up) == 2 and all(s["value"][1] == "1" for s in up):
        ok("prometheus-up-series", "up == 1 for both daemons")
    else:
        bad("prometheus-up-series", json.dumps(up)[:400])
    # negative controls: the same reconciler endpoint with a wrong token, a token without the
    # kt-metrics-reader role and a CA that did not sign the serving certificate
    want = {"negative-wrong-token": "401", "negative-no-role": "403",
            "negative-wrong-ca": "certificate"}
    for pool, needle in want.items():
        t = [x for x in ts if x["scrapePool"] == pool]
        if len(t) == 2 and all(x["health"] == "down" and needle in x["lastError"] for x in t):
            ok(f"prometheus-{pool}-down", f"both daemons: {t[0]['lastError'][:110]}")
        else:
            bad(f"prometheus-{pool}-down", "; ".join(
                f"{x['labels'].get('pod')}: {x['health']} {x['lastError']!r}" for x in t) or "no target")


def api_time(url):
    """Prometheus' idea of now (the instant queries' time)."""
    return api(url, "/api/v1/query", query="time()")["result"][0]


# ---- dashboard panels ------------------------------------------------------------------------
def substitute(expr, ns, rt):
    return (expr.replace("$__rate_interval", RATE).replace("${namespace}", ns)
            .replace("$namespace", ns).replace("${runtime}", rt).replace("$runtime", rt))


def label_values(url, label, metric, start, end):
    return api(url, f"/api/v1/label/{label}/values", **{"match[]": metric, "start": start, "end": end})


def cmd_panels(url, start, end, dashboard):
    d = json.load(open(dashboard))
    # the variables as Grafana fills them: their label_values() queries; "All" is allValue
    nss = label_values(url, "namespace", "kubeflow_trainer_trainjobs_by_state", start, end)
    rts = label_values(url, "runtime_name", "kubeflow_trainer_trainjobs_created_total", start, end)
    if any(n.startswith("e2e-") for n in nss) and "kubeflow-system" not in nss and rts:
        ok("dashboard-variables", f"namespace: {len(nss)} values, runtime: {len(rts)} values")
    else:
        bad("dashboard-variables", f"namespace values {nss} (want the TrainJobs' namespaces, not the "
            f"daemons'), runtime values {rts}")
    # one namespace picked as a person would look into one: where TrainJobs were created,
    # failed, suspended and deleted over the run (the metrics case's e2e-metrics when there),
    # with all its runtimes
    busy = set(nss)
    for what in ("created", "failed", "suspended", "deleted"):
        busy &= set(label_values(url, "namespace", f"kubeflow_trainer_trainjobs_{what}_total", start, end))
    busy = sorted(busy)
    ns1 = "e2e-metrics" if "e2e-metrics" in busy else (busy or nss or ["none"])[0]
    rt1 = "(" + "|".join(sorted(label_values(
        url, "runtime_name", f'kubeflow_trainer_trainjobs_created_total{{namespace="{ns1}"}}', start, end))) + ")"
    print(f"prometheus: panels evaluated with namespace=All and with namespace={ns1} runtime={rt1}, "
          f"$__rate_interval={RATE}, step {STEP}s over {int(float(end) - float(start))}s")
    n = 0
    for p in d["panels"]:
        exprs = [t["expr"] for t in p.get("targets", [])]
        if not exprs:
            continue
        why = []
        figures = []
        for e in exprs:
            variants = [(".*", ".*")]
            if "$namespace" in e or "$runtime" in e:
                variants.append((ns1, rt1))
            for ns, rt in variants:
                q = substitute(e, ns, rt)
                try:
                    r = query_range(url, q, start, end)
                except Exception as ex:  # a query error fails the panel
                    why.append(f"{q}: {ex}")
                    continue
                if points(r) == 0:
                    why.append(f"no data: {q}")
                figures.append(points(r))
        n += 1
        name = "dashboard-panel-" + re.sub(r"[^a-z0-9]+", "-", p["title"].lower()).strip("-")
        if why:
            bad(name, "; ".join(why)[:600])
        else:
            ok(name, f"{len(exprs)} queries, {min(figures)}-{max(figures)} points each")
    # negative control: the same check on a misspelled metric and on a namespace without
    # TrainJobs must find nothing
    neg = [substitute(p["targets"][0]["expr"], ".*", ".*").replace("by_state", "by_stat")
           for p in d["panels"][:1]]
    neg.append(substitute(d["panels"][0]["targets"][0]["expr"], "no-such-namespace", ".*"))
    if all(points(query_range(url, q, start, end)) == 0 for q in neg):
        ok("dashboard-panel-check-negative", "a misspelled metric and an unknown namespace show nothing")
    else:
        bad("dashboard-panel-check-negative", f"data for {neg}")
    return n


# ---- alert rules -----------------------------------------------------------------------------
CMP = re.compile(r"(==|!=|>=|<=|>|<)(\s*bool)?")
SETOP = re.compile(r"\b(and|or|unless)\b")


def split_top(expr, pattern):
    """Split expr at the matches of pattern that are outside (), {}, [] and quotes; returns
    [(operand, operator-or-None), ...]."""
    out, depth, i, last, quote = [], 0, 0, 0, None
    while i < len(expr):
        c = expr[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in "\"'`":
            quote = c
        elif c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
        elif depth == 0:
            m = pattern.match(expr, i)
            # a comparison, not part of =~, !~ or a label matcher (those are inside {})
            if m and (i == 0 or not expr[i - 1].isalnum() or pattern is CMP):
                out.append((expr[last:i].strip(), m.group(0)))
                i = last = m.end()
                continue
        i += 1
    out.append((expr[last:].strip(), None))
    return out


def is_literal(e):
    e = e.strip()
    return bool(re.fullmatch(r"[-+]?[0-9.eE+]+|vector\([-+0-9.eE]+\)", e))


def unwrap(e):
    e = e.strip()
    while e.startswith("(") and e.endswith(")"):
        depth = 0
        for i, c in enumerate(e):
            depth += c == "("
            depth -= c == ")"
            if depth == 0 and i < len(e) - 1:
                return e
        e = e[1:-1].strip()
    return e


def inner(expr):
    """The series an alert expression compares: set operations split, comparisons with a
    literal dropped, parentheses unwrapped, recursively; literals (and vector(N)) dropped."""
    parts = []
    for operand, _ in split_top(unwrap(expr), SETOP):
        sides = [s for s, _ in split_top(operand, CMP)]
        if len(sides) > 1:
            sides = [s for s in sides if not is_literal(s)]
            for s in sides:
                parts.extend(inner(s))
        elif unwrap(operand) != operand.strip() and SETOP.search(unwrap(operand)):
            parts.extend(inner(unwrap(operand)))
        elif not is_literal(operand):
            parts.append(operand.strip())
    return parts


# a vector selector: a metric name followed by its matchers or a range (functions take "(")
SELECTOR = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\}|\[)")


def selectors_missing(url, expr, start, end):
    """For each `metric{matchers}` in expr: '' when the metric has series over the run with
    every label it matches on, else what is missing."""
    out = []
    for metric, matchers in SELECTOR.findall(expr):
        if points(query_range(url, f"count({metric})", start, end)) == 0:
            out.append(f"{metric} has no series")
            continue
        for label in re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)", matchers.strip("{[")):
            if points(query_range(url, f'count({metric}{{{label}!=""}})', start, end)) == 0:
                out.append(f"{metric} has no label {label}")
    return "; ".join(out)


def cmd_rules(url, start, end):
    groups = api(url, "/api/v1/rules", type="alert")["groups"]
    rules = [r for g in groups for r in g["rules"]]
    bad_health = [f"{r['name']}: {r.get('lastError')}" for r in rules if r["health"] != "ok"]
    if rules and not bad_health:
        firing = [r["name"] for r in rules if r["state"] != "inactive"]
        ok("prometheus-alert-rules-evaluate",
           f"{len(rules)} rules, health ok, firing or pending: {', '.join(firing) or 'none'}")
    else:
        bad("prometheus-alert-rules-evaluate", "; ".join(bad_health) or "no rules loaded")
    for r in rules:
        why, figures = [], []
        for q in inner(r["query"]):
            try:
                n = points(query_range(url, q, start, end))
            except Exception as ex:
                why.append(f"{q}: {ex}")
                continue
            if n == 0:
                # quiet, not broken: what it counts did not happen in the run (an error
                # result), but every metric it selects has series with every label it matches on
                missing = selectors_missing(url, q, start, end)
                if missing:
                    why.append(f"no data: {q}; {missing}")
                else:
                    figures.append("0 (its metrics and labels have series)")
                continue
            figures.append(f"{n}")
        if why or not figures:
            bad(f"alert-inner-series-{r['name']}", "; ".join(why)[:600] or "nothing to evaluate")
        else:
            ok(f"alert-inner-series-{r['name']}", f"{len(figures)} inner expressions, points {'/'.join(figures)}")
    # negative control: an alert on a metric nobody exports has an empty inner series
    neg = inner("sum(rate(kubeflow_trainer_no_such_total[5m])) > 0.1 and (max(up) or vector(0)) < 1")
    if neg == ["sum(rate(kubeflow_trainer_no_such_total[5m]))", "max(up)"] and \
            points(query_range(url, neg[0], start, end)) == 0 and \
            selectors_missing(url, 'sum(rate(kubeflow_trainer_webhook_validation_total{reslt="error"}[5m]))', start, end):
        ok("alert-inner-check-negative", "an alert on an unexported metric and a misspelled label are caught")
    else:
        bad("alert-inner-check-negative", f"{neg}")


# ---- counters against the API server's view --------------------------------------------------
def watch_events(path):
    """The objects of `kubectl get --watch --output-watch-events -o json` (a JSON stream)."""
    text = open(path).read()
    dec, i, out = json.JSONDecoder(), 0, []
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        obj, i = dec.raw_decode(text, i)
        out.append(obj)


def counted(url, metric, end, by):
    """Per label tuple `by`, what the counter counted over the run, from its raw samples: a
    series starts from 0 (the daemons start with it), a drop is a restart."""
    r = instant(url, f"{metric}[{int(float(end) - START) + 5}s]", end)
    tot = {}
    for s in r:
        k = tuple(s["metric"].get(b, "") for b in by)
        prev, n = 0.0, 0.0
        for _, v in s["values"]:
            v = float(v)
            n += v - prev if v >= prev else v
            prev = v
        tot[k] = tot.get(k, 0) + n
    return {k: int(round(v)) for k, v in tot.items()}


def cmd_counters(url, start, end, watch):
    global START
    START = float(start)
    seen = {}
    for ev in watch_events(watch):
        o = ev["object"]
        u = o["metadata"]["uid"]
        e = seen.setdefault(u, {"ns": o["metadata"]["namespace"], "failed": None, "complete": False,
                                "deleted": False})
        for c in o.get("status", {}).get("conditions", []):
            if c["status"] == "True" and c["type"] == "Failed":
                e["failed"] = c.get("reason", "")
            if c["status"] == "True" and c["type"] == "Complete":
                e["complete"] = True
        if ev["type"] == "DELETED":
            e["deleted"] = True
    want = {"created": {}, "completed": {}, "failed": {}, "deleted": {}}
    for e in seen.values():
        want["created"][(e["ns"],)] = want["created"].get((e["ns"],), 0) + 1
        if e["complete"]:
            want["completed"][(e["ns"],)] = want["completed"].get((e["ns"],), 0) + 1
        if e["failed"] is not None:
            k = (e["ns"], e["failed"])
            want["failed"][k] = want["failed"].get(k, 0) + 1
        if e["deleted"]:
            want["deleted"][(e["ns"],)] = want["deleted"].get((e["ns"],), 0) + 1
    for what in ("created", "completed", "failed", "deleted"):
        by = ("namespace", "reason") if what == "failed" else ("namespace",)
        got = counted(url, f"kubeflow_trainer_trainjobs_{what}_total", end, by)
        diffs = []
        for k in sorted(set(got) | set(want[what])):
            g, w = got.get(k, 0), want[what].get(k, 0)
            # e2e-chaos: kt-reconciler is SIGKILLed there; what it counted after its last
            # scrape (≤ 1 s) is lost to any Prometheus, so fewer may be seen, never more
            if g != w and not (k[0] == "e2e-chaos" and 0 < g <= w):
                diffs.append(f"{'/'.join(k)}: prometheus {g}, API server {w}")
        tg, tw = sum(got.values()), sum(want[what].values())
        if diffs:
            bad(f"prometheus-counter-{what}", "; ".join(diffs)[:600])
        else:
            ok(f"prometheus-counter-{what}", f"prometheus {tg}, API server {tw} TrainJobs, "
               f"{len(want[what])} {'namespace/reason pairs' if what == 'failed' else 'namespaces'}")
    print(f"prometheus: TrainJobs seen by the watch: {len(seen)}, "
          f"failed {sum(want['failed'].values())}, complete {sum(want['completed'].values())}, "
          f"deleted {sum(want['deleted'].values())}")


# ---- series counts ---------------------------------------------------------------------------
def cmd_series(url, start, end):
    now = instant(url, 'count by (job) ({__name__=~"kubeflow_trainer_.+"})', end)
    peak = query_range(url, 'count by (job) ({__name__=~"kubeflow_trainer_.+"})', start, end)
    peak = ", ".join(f"{s['metric'].get('job', '?')} {max(int(float(v)) for _, v in s['values'])}"
                     for s in peak)
    allj = instant(url, 'count by (job) ({job=~"kubeflow-trainer-.*"})', end)
    over = api(url, "/api/v1/series", **{"match[]": '{__name__=~"kubeflow_trainer_.+"}', "start": start, "end": end})
    head = api(url, "/api/v1/status/tsdb")["headStats"]["numSeries"]
    fmt = lambda r: ", ".join(f"{s['metric'].get('job', '?')} {s['value'][1]}" for s in r)
    print(f"prometheus: series at the end: kubeflow_trainer_ {fmt(now)}; all metrics {fmt(allj)}; "
          f"kubeflow_trainer_ peak per scrape target: {peak}; "
          f"kubeflow_trainer_ series over the run (both reconciler processes) {len(over)}; "
          f"TSDB head series {head}")
    if now and over:
        ok("prometheus-series-counted", f"{sum(int(s['value'][1]) for s in now)} kubeflow_trainer_ series now, "
           f"{len(over)} over the run, {head} in the head")
    else:
        bad("prometheus-series-counted", "no kubeflow_trainer_ series")


def cmd_chart(url, start, end, out):
    r = query_range(url, "sum by (state) (kubeflow_trainer_trainjobs_by_state)", start, end, 2)
    # chart.py draws it; the SVG is checked here with Python's XML parser
    t0, t1 = float(start), float(end)
    series = {s["metric"].get("state", "?"): [(float(t), float(v)) for t, v in s["values"]] for s in r}
    svg = svg_chart(series, t0, t1, "TrainJobs by state over the e2e run "
                    "(sum by (state) (kubeflow_trainer_trainjobs_by_state))", gap=2 * 2)
    with open(out, "w") as f:
        f.write(svg)
    try:
        root = ET.parse(out).getroot()
        lines = root.findall("{http://www.w3.org/2000/svg}polyline")
        states = sorted(series)
        if root.tag == "{http://www.w3.org/2000/svg}svg" and lines and len(states) >= 3:
            ok("prometheus-chart-svg", f"{out}: valid XML, {len(lines)} lines, states {', '.join(states)}")
        else:
            bad("prometheus-chart-svg", f"{out}: {len(lines)} lines, states {states}")
    except ET.ParseError as ex:
        bad("prometheus-chart-svg", f"{out}: not XML: {ex}")
    # negative control: the parser really rejects a broken SVG
    try:
        ET.fromstring(svg[: len(svg) // 2])
        bad("prometheus-chart-svg-negative", "a truncated SVG parsed")
    except ET.ParseError:
        ok("prometheus-chart-svg-negative", "a truncated SVG does not parse")


def main(argv):
    cmds = {"targets": (cmd_targets, 1), "panels": (cmd_panels, 4), "rules": (cmd_rules, 3),
            "counters": (cmd_counters, 4), "series": (cmd_series, 3), "chart": (cmd_chart, 4)}
    if len(argv) < 2 or argv[1] not in cmds or len(argv) - 2 != cmds[argv[1]][1]:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        cmds[argv[1]][0](*argv[2:])
    except Exception as ex:  # an unreachable Prometheus or an API error fails the check
        bad(f"prometheus-{argv[1]}", f"{type(ex).__name__}: {ex}")
    return 0


START = 0.0
if __name__ == "__main__":
    sys.exit(main(sys.argv))
