// A bar chart as inline SVG, made on the server: no script, no inline style (the
// stylesheet colours it), and a text alternative in its title and description.
export interface Bar {
  readonly label: string;
  readonly value: number;
  readonly overdue: boolean;
}

const escapeXml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const WIDTH = 780;
const HEIGHT = 260;
const TOP = 24;
const BOTTOM = 40;

export function barChart(bars: readonly Bar[]): string {
  const max = Math.max(1, ...bars.map((b) => b.value));
  const slot = WIDTH / bars.length;
  const plot = HEIGHT - TOP - BOTTOM;
  const parts = bars.map((b, i) => {
    const h = Math.round((b.value / max) * plot);
    const x = Math.round(i * slot + slot * 0.15);
    const w = Math.round(slot * 0.7);
    const y = TOP + plot - h;
    const mid = Math.round(i * slot + slot / 2);
    const [month, year] = b.label.split(' ');
    return `<rect class="bar${b.overdue ? ' overdue' : ''}" x="${x}" y="${y}" width="${w}" height="${h}"></rect>`
      + `<text x="${mid}" y="${y - 6}" text-anchor="middle">${b.value}</text>`
      + `<text x="${mid}" y="${HEIGHT - BOTTOM + 16}" text-anchor="middle">${escapeXml(month ?? '')}</text>`
      + (year ? `<text x="${mid}" y="${HEIGHT - BOTTOM + 30}" text-anchor="middle">${escapeXml(year)}</text>` : '');
  });
  const described = bars.map((b) => `${b.label}: ${b.value}`).join('; ');
  return `<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="chart-title chart-desc" xmlns="http://www.w3.org/2000/svg">`
    + `<title id="chart-title">Checks due per month, overdue first</title><desc id="chart-desc">${escapeXml(described)}</desc>`
    + `<line x1="0" y1="${TOP + plot}" x2="${WIDTH}" y2="${TOP + plot}" stroke="currentColor"></line>${parts.join('')}</svg>`;
}
