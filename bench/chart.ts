// The suite's chart: one horizontal bar per server and scenario, its throughput as a share of the
// ceiling (a bare node:http server) measured in the same run, with the goal marked on Threadline's
// bar. Plain SVG text, written by the script itself.

interface Summary {
  requestsPerSecond: number
}

interface Goal {
  goal: string
  target: number
}

const COLORS: Record<string, string> = {
  threadline: '#2563eb',
  'json-server': '#9ca3af',
  apollo: '#a855f7',
  yoga: '#ec4899',
  'node:http': '#111827',
}

/** Which goal (by its text) marks a scenario's Threadline bar. */
const GOAL_OF: Record<string, string> = {
  'GET one user': 'GET one user, x ceiling (aim 0.6)',
  'GET page of 20, v1 (total)': 'GET page of 20 v1, x ceiling',
  'GET page of 20, v2 (no total)': 'GET page of 20 v2, x ceiling',
  'conditional GET, 304': 'conditional GET 304, x ceiling',
  'GraphQL user(id)': 'GraphQL user(id), x ceiling',
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

export function renderChart(input: {
  summary: Record<string, Partial<Record<string, Summary>>>
  ceiling: number
  goals: readonly Goal[]
  date: string
  machine: { cpus: number; cpu?: string; node: string }
}): string {
  const { summary, ceiling, goals, date, machine } = input
  const labelWidth = 230
  const barArea = 520
  const rowHeight = 18
  const width = labelWidth + barArea + 140
  const rows: string[] = []
  let y = 64
  const ratios = Object.values(summary).flatMap((byTarget) => Object.values(byTarget).map((s) => (s?.requestsPerSecond ?? 0) / ceiling))
  const scale = Math.max(1, ...ratios)
  const x = (ratio: number) => labelWidth + (ratio / scale) * barArea
  for (const [scenario, byTarget] of Object.entries(summary)) {
    rows.push(`<text x="8" y="${y + 13}" font-weight="bold">${escape(scenario)}</text>`)
    y += rowHeight
    for (const [target, s] of Object.entries(byTarget)) {
      if (s === undefined) continue
      const ratio = s.requestsPerSecond / ceiling
      const color = COLORS[target] ?? '#6b7280'
      rows.push(
        `<text x="24" y="${y + 12}">${escape(target)}</text>`,
        `<rect x="${labelWidth}" y="${y + 2}" width="${Math.max(1, x(ratio) - labelWidth).toFixed(1)}" height="${rowHeight - 5}" fill="${color}"/>`,
        `<text x="${(x(ratio) + 4).toFixed(1)}" y="${y + 12}">${ratio.toFixed(ratio < 0.1 ? 3 : 2)} (${Math.round(s.requestsPerSecond).toLocaleString('en-US')}/s)</text>`,
      )
      const goal = goals.find((g) => g.goal === GOAL_OF[scenario])
      if (target === 'threadline' && goal !== undefined) {
        rows.push(
          `<line x1="${x(goal.target).toFixed(1)}" x2="${x(goal.target).toFixed(1)}" y1="${y}" y2="${y + rowHeight - 1}" stroke="#dc2626" stroke-width="2"/>`,
        )
      }
      y += rowHeight
    }
    y += 6
  }
  const height = y + 30
  const ticks = [0, 0.25, 0.5, 0.75, 1]
    .filter((t) => t <= scale)
    .map(
      (t) =>
        `<line x1="${x(t)}" x2="${x(t)}" y1="56" y2="${y}" stroke="#e5e7eb"/><text x="${x(t)}" y="${y + 14}" text-anchor="middle" fill="#6b7280">${t}</text>`,
    )
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="12">
<rect width="100%" height="100%" fill="#ffffff"/>
<text x="8" y="20" font-size="15" font-weight="bold">Requests per second as a share of the ceiling (bare node:http: ${Math.round(ceiling).toLocaleString('en-US')}/s)</text>
<text x="8" y="40" fill="#4b5563">${escape(`npm run bench, ${date.slice(0, 10)}, ${machine.cpus} cores (${machine.cpu ?? 'unknown CPU'}), Node ${machine.node}. Red tick: Threadline's goal.`)}</text>
${ticks.join('\n')}
${rows.join('\n')}
<text x="${labelWidth}" y="${y + 28}" fill="#6b7280">share of the ceiling</text>
</svg>
`
}
