// The overview's charts: server-rendered SVG (no script), each with the same
// numbers in a table below it. A chart is an image to assistive technology
// (role="img" with its name); the table is what a screen reader reads.
// Amounts stay bigint minor units until they are formatted for display.
import type { Asset as LedgerCurrency } from '../../money/asset.ts';
import { formatMinor } from '../../money/decimal.ts';
import { html, type View } from '../views/html.ts';

const WIDTH = 720;
const HEIGHT = 220;
const PAD_TOP = 24;
const PAD_BOTTOM = 32;
const PAD_LEFT = 8;
const PAD_RIGHT = 8;
const PLOT_HEIGHT = HEIGHT - PAD_TOP - PAD_BOTTOM;
const PLOT_WIDTH = WIDTH - PAD_LEFT - PAD_RIGHT;
/** Vertical scaling keeps three decimals of a pixel (bigint arithmetic, no float money). */
const SCALE = 1000n;

export interface ChartPoint {
  /** `YYYY-MM-DD` (UTC). */
  readonly day: string;
  /** Minor units. */
  readonly value: bigint;
}

/** The span the chart shows: zero always inside it, so bars and lines keep their baseline. */
function bounds(points: readonly ChartPoint[]): { low: bigint; high: bigint } {
  let low = 0n;
  let high = 0n;
  for (const point of points) {
    if (point.value < low) low = point.value;
    if (point.value > high) high = point.value;
  }
  // All zero: a span of one minor unit draws the zero line at the bottom.
  return { low, high: high === low ? low + 1n : high };
}

/** The label of the top of the plot: the highest value, or 0 when nothing is above zero. */
function topLabel(points: readonly ChartPoint[], high: bigint): bigint {
  return points.some((point) => point.value >= high) ? high : 0n;
}

/** The y coordinate of a value: the top of the plot is `high`, its bottom `low`. */
function yOf(value: bigint, low: bigint, high: bigint): number {
  const fromTop = ((high - value) * BigInt(PLOT_HEIGHT) * SCALE) / (high - low);
  return PAD_TOP + Number(fromTop) / Number(SCALE);
}

function round(value: number): string {
  return value.toFixed(2);
}

function Axis(props: { points: readonly ChartPoint[]; low: bigint; high: bigint; currency: LedgerCurrency }): View {
  const zero = yOf(0n, props.low, props.high);
  const first = props.points[0]?.day ?? '';
  const last = props.points.at(-1)?.day ?? '';
  return html`<g class="chart-axis">
    <line x1=${PAD_LEFT} x2=${WIDTH - PAD_RIGHT} y1=${round(zero)} y2=${round(zero)} stroke="#6b7280" />
    <text x=${PAD_LEFT} y=${PAD_TOP - 4} font-size="16" fill="#374151">
      ${formatMinor(topLabel(props.points, props.high), props.currency)} ${props.currency}
    </text>
    <text x=${PAD_LEFT} y=${HEIGHT - 8} font-size="16" fill="#374151">${first}</text>
    <text x=${WIDTH - PAD_RIGHT} y=${HEIGHT - 8} font-size="16" fill="#374151" text-anchor="end">${last}</text>
  </g>`;
}

/** Bars per day above (or below) the zero line. */
export function BarChart(props: { label: string; currency: LedgerCurrency; points: readonly ChartPoint[] }): View {
  const { low, high } = bounds(props.points);
  const slot = PLOT_WIDTH / Math.max(props.points.length, 1);
  const zero = yOf(0n, low, high);
  return html`<svg class="chart" viewBox=${`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label=${props.label}>
    <title>${props.label}</title>
    ${props.points.map((point, index) => {
      if (point.value === 0n) return null;
      const y = yOf(point.value, low, high);
      return html`<rect
        x=${round(PAD_LEFT + index * slot + slot * 0.1)}
        width=${round(Math.max(slot * 0.8, 0.5))}
        y=${round(Math.min(y, zero))}
        height=${round(Math.max(Math.abs(zero - y), 0.5))}
        fill=${point.value < 0n ? '#b91c1c' : '#1d4ed8'}
      />`;
    })}
    ${Axis({ points: props.points, low, high, currency: props.currency })}
  </svg>`;
}

/** A line through each day's value (the balance at the end of each day). */
export function LineChart(props: { label: string; currency: LedgerCurrency; points: readonly ChartPoint[] }): View {
  const { low, high } = bounds(props.points);
  const slot = PLOT_WIDTH / Math.max(props.points.length, 1);
  const path = props.points
    .map((point, index) => `${round(PAD_LEFT + index * slot + slot / 2)},${round(yOf(point.value, low, high))}`)
    .join(' ');
  return html`<svg class="chart" viewBox=${`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label=${props.label}>
    <title>${props.label}</title>
    <polyline points=${path} fill="none" stroke="#1d4ed8" stroke-width="2" vector-effect="non-scaling-stroke" />
    ${Axis({ points: props.points, low, high, currency: props.currency })}
  </svg>`;
}

export interface TableColumn {
  readonly heading: string;
  readonly values: readonly bigint[];
}

/** The numbers of a chart, one row per day, every column in the chart's currency. */
export function DayTable(props: {
  caption: string;
  dayHeading: string;
  currency: LedgerCurrency;
  days: readonly string[];
  columns: readonly TableColumn[];
}): View {
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label=${props.caption}>
    <table class="chart-table">
      <caption>
        ${props.caption}
      </caption>
      <thead>
        <tr>
          <th scope="col">${props.dayHeading}</th>
          ${props.columns.map((column) => html`<th scope="col" class="num">${column.heading}, ${props.currency}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${props.days.map(
          (day, row) =>
            html`<tr data-day=${day}>
              <th scope="row">${day}</th>
              ${props.columns.map(
                (column) => html`<td class="num">${formatMinor(column.values[row] ?? 0n, props.currency)}</td>`,
              )}
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}
