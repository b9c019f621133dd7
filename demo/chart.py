#!/usr/bin/python3
"""demo/chart.py — the demo's chart: instances held per share over time.

Usage: chart.py SHARES.CSV OUT.SVG

Reads the samples demo/story.py wrote (kind,t,environment,queue,share,
value,label rows: "capacity" and "limit" rows for the setup, "held" rows,
one per share and poll, and "marker" rows for preemption decisions) and
writes one SVG: a panel per service environment, the instances each share
held as stacked areas (a step between samples), the environment's capacity
and the quota shares' guarantees as dashed lines, preemptions as vertical
marks, time in seconds on the x axis.  Plain SVG text from the Python
standard library; no plotting package.
"""
import csv
import math
import sys
from collections import OrderedDict
from xml.sax.saxutils import escape

PALETTE = ["#3b75af", "#ef8636", "#c53a32", "#8d69b8", "#84584e", "#519e3e", "#d57dbf", "#7f7f7f",
		   "#bcbc35", "#58bbcc"]
WIDTH = 1000
LEFT, RIGHT = 70, 210			# room for the y axis and for the legend
PANEL_GAP = 70
HALO = 'paint-order="stroke" stroke="white" stroke-width="3" stroke-linejoin="round"'	# legible over the areas


def nice_step(span, ticks):
	"""A round tick step (1, 2, 5 x 10^n) giving about `ticks` ticks."""
	raw = max(span / max(ticks, 1), 1e-9)
	mag = 10 ** math.floor(math.log10(raw))
	for m in (1, 2, 5, 10):
		if raw <= m * mag:
			return m * mag
	return 10 * mag


def fmt(v):
	return str(int(v)) if float(v).is_integer() else f"{v:g}"


def read(path):
	capacity, limits, held, markers, placed = {}, {}, OrderedDict(), [], []
	times = []
	with open(path, newline="", encoding="utf-8") as f:
		for r in csv.DictReader(f):
			env, kind = r["environment"], r["kind"]
			if kind == "capacity":
				capacity.setdefault(env, {})[r["share"]] = float(r["value"])
			elif kind == "limit":
				limits.setdefault(env, OrderedDict())[(r["queue"], r["share"])] = float(r["value"])
			elif kind == "held":
				t = float(r["t"])
				if not times or times[-1] != t:
					times.append(t)
				held.setdefault(env, OrderedDict()).setdefault((r["queue"], r["share"]), {})[t] = float(r["value"])
			elif kind == "marker":
				markers.append((float(r["t"]), env, r["label"]))
			elif kind == "placed":
				placed.append((float(r["t"]), env, r["share"], r["label"]))
	return capacity, limits, held, markers, placed, sorted(set(times))


def env_capacity(units):
	"""The instances an environment can run: its NUM_INSTANCES limit, else
	the sum of its per-type limits."""
	if "NUM_INSTANCES" in units:
		return units["NUM_INSTANCES"]
	return sum(units.values())


def chart(path_in, path_out):
	capacity, limits, held, markers, placed, times = read(path_in)
	if not times:
		raise SystemExit("no samples in " + path_in)
	# Panels in the order the environments were first used.
	def first_use(env):
		used = [t for s in held[env].values() for t, v in s.items() if v > 0]
		return min(used) if used else float("inf")
	envs = sorted(held, key=first_use)
	t_max = max(times[-1], 1.0)
	plot_w = WIDTH - LEFT - RIGHT
	heights = {e: 300 if env_capacity(capacity.get(e, {"": 0})) >= 20 else 130 for e in envs}
	top = 108
	total_h = top + sum(heights[e] + PANEL_GAP for e in envs) + 10
	svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{total_h}" '
		   f'viewBox="0 0 {WIDTH} {total_h}" font-family="Helvetica, Arial, sans-serif" font-size="12">',
		   f'<rect width="{WIDTH}" height="{total_h}" fill="white"/>',
		   f'<text x="{LEFT}" y="28" font-size="18" font-weight="bold">fairshare demo: instances held per share over time</text>',
		   f'<text x="{LEFT}" y="48" fill="#555">Instances of SCHEDULED, STARTING or RUNNING jobs (also while stopping), '
		   f'sampled at every poll of the demo: {len(times)} samples over {fmt(round(t_max))} s.</text>',
		   f'<text x="{LEFT}" y="64" fill="#555">Red lines: preemption decisions. Small pools name each job where it '
		   f'was placed.</text>']
	colour_of = {}
	x_step = nice_step(t_max, 10)

	def x(t):
		return LEFT + plot_w * t / t_max

	y0 = top
	for env in envs:
		h = heights[env]
		cap = env_capacity(capacity.get(env, {"": 0}))
		series = held[env]
		peak = max([cap] + [sum(s.get(t, 0) for s in series.values()) for t in times])
		y_max = peak * 1.08 if peak else 1
		units = ", ".join(f"{u} limit {fmt(v)}" for u, v in capacity.get(env, {}).items())
		queues = sorted({q for q, _ in series})

		def y(v):
			return y0 + h - h * v / y_max
		svg.append(f'<text x="{LEFT}" y="{y0 - 12}" font-size="14" font-weight="bold">{escape(env)}'
				   f'<tspan dx="8" font-weight="normal" fill="#555">{escape(units)}; '
				   f'queue {escape(", ".join(queues))}</tspan></text>')
		# grid and y axis
		y_step = max(nice_step(y_max, 5 if h > 200 else 3), 1)
		v = 0.0
		while v <= y_max + 1e-9:
			svg.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#e4e4e4"/>')
			svg.append(f'<text x="{LEFT - 8}" y="{y(v) + 4:.1f}" text-anchor="end" fill="#333">{fmt(v)}</text>')
			v += y_step
		t = 0.0
		while t <= t_max + 1e-9:
			svg.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{y0}" y2="{y0 + h}" stroke="#f0f0f0"/>')
			svg.append(f'<text x="{x(t):.1f}" y="{y0 + h + 16}" text-anchor="middle" fill="#333">{fmt(t)}</text>')
			t += x_step
		# stacked step areas, first series at the bottom
		base = [0.0] * len(times)
		legend = []
		for key, values in series.items():
			colour = colour_of.setdefault(key[1], PALETTE[len(colour_of) % len(PALETTE)])
			tops = [base[i] + values.get(t, 0) for i, t in enumerate(times)]
			edge_top, edge_bottom = [], []
			for i, t in enumerate(times):
				t_next = times[i + 1] if i + 1 < len(times) else t_max
				edge_top += [(x(t), y(tops[i])), (x(t_next), y(tops[i]))]
				edge_bottom += [(x(t), y(base[i])), (x(t_next), y(base[i]))]
			points = edge_top + edge_bottom[::-1]
			svg.append('<polygon fill="%s" fill-opacity="0.85" stroke="%s" stroke-width="0.8" points="%s"/>'
					   % (colour, colour, " ".join(f"{px:.1f},{py:.1f}" for px, py in points)))
			legend.append((colour, key, max(values.values()) if values else 0))
			base = tops
		# capacity and guarantees
		svg.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y(cap):.1f}" y2="{y(cap):.1f}" stroke="black" '
				   f'stroke-width="1.5" stroke-dasharray="6,4"/>')
		svg.append(f'<text x="{LEFT + plot_w - 4}" y="{y(cap) - 5:.1f}" text-anchor="end" {HALO}>capacity {fmt(cap)}</text>')
		# The quota shares' guarantees, stacked in the same order as the
		# areas: the bottom share above its line is borrowing.
		cumulative, below = 0.0, []
		for key in series:
			if key in limits.get(env, {}):
				cumulative += limits[env][key]
				below.append(key[1])
				if cumulative < cap:
					if len(below) == 1:
						label = (f"{below[0]}'s guarantee ({fmt(cumulative)}): above this line {below[0]} "
								 f"borrows what others lend")
					else:
						label = f"guarantees of {' + '.join(below)} ({fmt(cumulative)})"
					svg.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y(cumulative):.1f}" y2="{y(cumulative):.1f}" '
							   f'stroke="#111" stroke-width="1.2" stroke-dasharray="2,3"/>')
					svg.append(f'<text x="{LEFT + 6}" y="{y(cumulative) - 5:.1f}" {HALO}>{escape(label)}</text>')
		# preemption decisions
		lane = 0
		for t, m_env, label in markers:
			if m_env != env:
				continue
			ly = y(cap) + 16 + 14 * (lane % 4)
			lane += 1
			svg.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{y0}" y2="{y0 + h}" stroke="#c00" stroke-width="1.2"/>')
			svg.append(f'<text x="{x(t) + 4:.1f}" y="{ly:.1f}" fill="#b00" font-size="11" {HALO}>{escape(label)}</text>')
		# In a small environment, which job each placement was (the order
		# is the point there): a tick on the time axis and the job's name.
		mine = [p for p in placed if p[1] == env]
		if h < 200 and len(mine) <= 12:
			for k, (t, _, share, name) in enumerate(mine):
				ly = y0 + h - 6 - 13 * (k % 3)
				svg.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{y0 + h}" y2="{y0 + h + 5}" stroke="black"/>')
				svg.append(f'<text x="{x(t) + 3:.1f}" y="{ly:.1f}" font-size="11" {HALO}>{escape(name)}</text>')
		# axes
		svg.append(f'<line x1="{LEFT}" x2="{LEFT}" y1="{y0}" y2="{y0 + h}" stroke="black"/>')
		svg.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y0 + h}" y2="{y0 + h}" stroke="black"/>')
		svg.append(f'<text transform="translate({LEFT - 46},{y0 + h / 2:.1f}) rotate(-90)" text-anchor="middle">'
				   f'instances held</text>')
		svg.append(f'<text x="{LEFT + plot_w / 2:.1f}" y="{y0 + h + 34}" text-anchor="middle">'
				   f'seconds since the story started</text>')
		# legend, top of the stack first
		lx, ly = LEFT + plot_w + 16, y0 + 8
		svg.append(f'<text x="{lx}" y="{ly}" font-weight="bold">share (peak held)</text>')
		for colour, (queue, share), peak_held in reversed(legend):
			ly += 18
			svg.append(f'<rect x="{lx}" y="{ly - 10}" width="12" height="12" fill="{colour}"/>')
			svg.append(f'<text x="{lx + 18}" y="{ly}">{escape(share)} ({fmt(peak_held)})</text>')
		y0 += h + PANEL_GAP
	svg.append("</svg>")
	with open(path_out, "w", encoding="utf-8") as f:
		f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
	if len(sys.argv) != 3:
		raise SystemExit(__doc__)
	chart(sys.argv[1], sys.argv[2])
