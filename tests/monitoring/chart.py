#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/monitoring/chart.py - a line chart as hand-written SVG (no plotting library), for the
e2e tier's picture of TrainJobs by state (tests/monitoring/prom_check.py chart). Colours follow
the state names of kubeflow_trainer_trainjobs_by_state.

  chart.py IN.json OUT.svg [TITLE]   IN.json: a Prometheus query_range answer (.data.result),
                                     each series named by its `state` label
"""
import json
import sys

# ---- the chart -------------------------------------------------------------------------------
COLOURS = {"Created": "#7f7f7f", "Running": "#1f77b4", "Suspended": "#ff7f0e",
           "Complete": "#2ca02c", "Failed": "#d62728"}


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def svg_chart(series, t0, t1, title, gap=6):
    """An SVG line chart: series is {name: [(t, v), ...]} (t in seconds, t0..t1 the x axis);
    a hole of more than gap seconds between samples breaks a line."""
    W, H, L, R, TOP, B = 860, 420, 60, 150, 40, 50
    pw, ph = W - L - R, H - TOP - B
    vmax = max([v for pts in series.values() for _, v in pts] + [1])
    ymax = int(vmax) + (1 if vmax == int(vmax) else 2)
    span = max(t1 - t0, 1)
    x = lambda t: L + (t - t0) / span * pw
    y = lambda v: TOP + ph - v / ymax * ph
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
         f'font-family="sans-serif" font-size="12">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{L}" y="22" font-size="15" font-weight="bold">{esc(title)}</text>']
    ystep = max(1, ymax // 8)
    for v in range(0, ymax + 1, ystep):
        o.append(f'<line x1="{L}" y1="{y(v):.1f}" x2="{L + pw}" y2="{y(v):.1f}" stroke="#e0e0e0"/>')
        o.append(f'<text x="{L - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v}</text>')
    xstep = max(10, int(span / 8 / 10 + 1) * 10)
    for s in range(0, int(span) + 1, xstep):
        o.append(f'<line x1="{x(t0 + s):.1f}" y1="{TOP + ph}" x2="{x(t0 + s):.1f}" y2="{TOP + ph + 4}" stroke="black"/>')
        o.append(f'<text x="{x(t0 + s):.1f}" y="{TOP + ph + 18}" text-anchor="middle">{s}s</text>')
    o.append(f'<line x1="{L}" y1="{TOP + ph}" x2="{L + pw}" y2="{TOP + ph}" stroke="black"/>')
    o.append(f'<line x1="{L}" y1="{TOP}" x2="{L}" y2="{TOP + ph}" stroke="black"/>')
    o.append(f'<text x="{L + pw / 2}" y="{H - 10}" text-anchor="middle">seconds since Prometheus started</text>')
    o.append(f'<text x="14" y="{TOP + ph / 2}" text-anchor="middle" transform="rotate(-90 14 {TOP + ph / 2})">TrainJobs</text>')
    for i, (name, pts) in enumerate(sorted(series.items())):
        c = COLOURS.get(name, "#9467bd")
        # a gap (no sample for more than two steps) breaks the line
        runs, cur, last = [], [], None
        for t, v in pts:
            if last is not None and t - last > gap:
                runs.append(cur)
                cur = []
            cur.append(f"{x(t):.1f},{y(v):.1f}")
            last = t
        runs.append(cur)
        for r in runs:
            if r:
                o.append(f'<polyline fill="none" stroke="{c}" stroke-width="2" points="{" ".join(r)}">'
                         f'<title>{esc(name)}</title></polyline>')
        ly = TOP + 10 + i * 20
        o.append(f'<line x1="{L + pw + 15}" y1="{ly}" x2="{L + pw + 35}" y2="{ly}" stroke="{c}" stroke-width="3"/>')
        peak = max((v for _, v in pts), default=0)
        o.append(f'<text x="{L + pw + 40}" y="{ly + 4}">{esc(name)} (max {peak:g})</text>')
    o.append("</svg>")
    return "\n".join(o) + "\n"



def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    result = json.load(open(argv[1]))["data"]["result"]
    series = {s["metric"].get("state", "?"): [(float(t), float(v)) for t, v in s["values"]] for s in result}
    ts = [t for pts in series.values() for t, _ in pts] or [0.0]
    with open(argv[2], "w") as f:
        f.write(svg_chart(series, min(ts), max(ts), argv[3] if len(argv) == 4 else "TrainJobs by state"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
