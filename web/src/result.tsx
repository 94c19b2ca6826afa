/** One answer's result: highlighted SQL with copy, the table (sortable, paged, CSV) and the chart. */
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart as ChartJs,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from 'chart.js';
import hljs from 'highlight.js/lib/core';
import sqlLanguage from 'highlight.js/lib/languages/sql';
import { useEffect, useId, useMemo, useRef, useState } from 'preact/hooks';
import { limitNote, limitReached } from '../../src/agent/statement-limit.js';
import type { Cell, Chart, Column } from './api';
import { toCsv } from './csv';
import {
  cellText,
  chartRows,
  chartValue,
  formatNumber,
  isIdentifierColumn,
  isNumericType,
  sortRows,
} from './format';

hljs.registerLanguage('sql', sqlLanguage);
ChartJs.register(
  BarController,
  BarElement,
  LineController,
  LineElement,
  PointElement,
  CategoryScale,
  LinearScale,
  Tooltip,
  Legend,
);

export function SqlBlock({ sql }: { sql: string }) {
  const [copied, setCopied] = useState(false);
  const html = useMemo(() => hljs.highlight(sql, { language: 'sql' }).value, [sql]);
  return (
    <details class="sql" open>
      <summary>SQL</summary>
      <button
        type="button"
        class="copy"
        aria-label="Copy SQL"
        onClick={() => {
          void navigator.clipboard?.writeText(sql).then(() => setCopied(true));
          setTimeout(() => setCopied(false), 1500);
        }}
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
      <pre>
        <code class="hljs language-sql" dangerouslySetInnerHTML={{ __html: html }} />
      </pre>
    </details>
  );
}

const show = (v: Cell): string => cellText(v);

/**
 * One table cell: NULL as a dimmed ∅ (distinct from '' and the text 'NULL'), numbers grouped
 * except identifiers and years (`plain`).
 */
function CellView({ value, numeric, plain }: { value: Cell; numeric: boolean; plain: boolean }) {
  if (value === null)
    return (
      <td class="null">
        <span aria-hidden="true">∅</span>
        <span class="sr-only">null</span>
      </td>
    );
  if (numeric) return <td class="num">{plain ? show(value) : formatNumber(value)}</td>;
  return <td>{show(value)}</td>;
}

const PAGE = 20;

export function ResultTable({
  columns,
  rows,
  truncated,
  truncatedReason,
  sql,
}: {
  columns: Column[];
  rows: Cell[][];
  truncated: boolean;
  /** Why the result was cut (value contract): the row cap or the byte budget. */
  truncatedReason?: 'max_rows' | 'max_bytes' | undefined;
  /** The statement, to say when its own LIMIT cut the list. */
  sql?: string | undefined;
}) {
  const limit = truncated ? undefined : limitReached(sql, rows.length);
  const [sort, setSort] = useState<{ col: number; dir: 1 | -1 } | null>(null);
  const [page, setPage] = useState(0);
  const numeric = useMemo(() => columns.map((c) => isNumericType(c.type)), [columns]);
  const plain = useMemo(() => columns.map((c) => isIdentifierColumn(c.name, c.type)), [columns]);
  const sorted = useMemo(() => {
    if (!sort) return rows;
    return sortRows(rows, sort.col, sort.dir, numeric[sort.col] ?? false);
  }, [rows, sort, numeric]);
  const pages = Math.max(1, Math.ceil(sorted.length / PAGE));
  const shown = sorted.slice(page * PAGE, page * PAGE + PAGE);
  const download = () => {
    const url = URL.createObjectURL(
      new Blob(
        [
          toCsv(
            columns.map((c, i) => ({ name: c.name, numeric: numeric[i] })),
            sorted,
          ),
        ],
        { type: 'text/csv' },
      ),
    );
    const a = document.createElement('a');
    a.href = url;
    a.download = 'result.csv';
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };
  return (
    <div class="result">
      {truncated && (
        <p class="notice" role="note">
          {truncatedReason === 'max_bytes'
            ? `Only the first ${rows.length} rows were fetched (the result size limit was reached).`
            : `Only the first ${rows.length} rows were fetched (the row limit was reached).`}{' '}
          Sorting covers the fetched rows only.
        </p>
      )}
      {limit !== undefined && (
        <p class="notice" role="note">
          These are {limitNote(limit)}: there may be more.
        </p>
      )}
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard (WCAG 2.1.1) */}
      <section class="table-wrap" tabIndex={0} aria-label="Result table, scrolls sideways">
        <table aria-label="Result">
          <thead>
            <tr>
              {columns.map((c, i) => (
                <th
                  key={c.name + i}
                  class={numeric[i] ? 'num' : undefined}
                  aria-sort={sort?.col === i ? (sort.dir === 1 ? 'ascending' : 'descending') : 'none'}
                >
                  <button
                    type="button"
                    onClick={() =>
                      setSort(sort?.col === i ? { col: i, dir: sort.dir === 1 ? -1 : 1 } : { col: i, dir: 1 })
                    }
                  >
                    {c.name}
                    {sort?.col === i ? (sort.dir === 1 ? ' ▲' : ' ▼') : ''}
                  </button>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {shown.map((r, i) => (
              <tr key={i}>
                {r.map((v, j) => (
                  <CellView key={j} value={v} numeric={numeric[j] ?? false} plain={plain[j] ?? false} />
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <div class="table-bar">
        <span>
          {rows.length} row{rows.length === 1 ? '' : 's'}
          {truncated ? ' (truncated)' : ''}
        </span>
        <span class="scroll-hint muted">Wide table: scroll sideways</span>
        {pages > 1 && (
          <span class="pager">
            <button
              type="button"
              aria-label="Previous page"
              disabled={page === 0}
              onClick={() => setPage(page - 1)}
            >
              ‹
            </button>
            {page + 1}/{pages}
            <button
              type="button"
              aria-label="Next page"
              disabled={page >= pages - 1}
              onClick={() => setPage(page + 1)}
            >
              ›
            </button>
          </span>
        )}
        <button type="button" onClick={download}>
          Download CSV
        </button>
      </div>
    </div>
  );
}

const COLORS = ['#2563eb', '#16a34a', '#d97706', '#dc2626', '#7c3aed', '#0891b2'];

/** The chart with a bar/line/none choice (the server's suggestion is the default). */
export function ResultChart({ chart, columns, rows }: { chart: Chart; columns: Column[]; rows: Cell[][] }) {
  const [kind, setKind] = useState<'bar' | 'line' | 'none'>(chart.type);
  return (
    <div class="chart-box">
      <fieldset class="chart-choice">
        <legend class="sr-only">Chart type</legend>
        {(['bar', 'line', 'none'] as const).map((k) => (
          <button type="button" key={k} aria-pressed={kind === k} onClick={() => setKind(k)}>
            {k === 'none' ? 'No chart' : k === 'bar' ? 'Bar' : 'Line'}
          </button>
        ))}
      </fieldset>
      {kind !== 'none' && <ChartCanvas chart={{ ...chart, type: kind }} columns={columns} rows={rows} />}
    </div>
  );
}

/** Most x values the chart's text description names (a screen reader reads them all). */
const DESCRIBED_POINTS = 60;

function ChartCanvas({ chart, columns, rows }: { chart: Chart; columns: Column[]; rows: Cell[][] }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const descriptionId = useId();
  const xi = columns.findIndex((c) => c.name === chart.x);
  // The rows in drawing order (a line over dates runs in date order whatever the rows' order).
  const drawn = useMemo(() => chartRows(rows, xi, chart.type), [rows, xi, chart.type]);
  const labels = drawn.map((r) => show(r[xi] ?? null));
  useEffect(() => {
    if (!canvas.current) return;
    const instance = new ChartJs(canvas.current, {
      type: chart.type,
      data: {
        labels,
        datasets: chart.series.map((name, i) => {
          const ci = columns.findIndex((c) => c.name === name);
          return {
            label: name,
            data: drawn.map((r) => chartValue(r[ci] ?? null)),
            backgroundColor: COLORS[i % COLORS.length],
            borderColor: COLORS[i % COLORS.length],
          };
        }),
      },
      options: { responsive: true, maintainAspectRatio: false, animation: false },
    });
    return () => instance.destroy();
  }, [chart.type, chart.x, chart.series.join('\u0000'), columns, drawn]);
  const more = labels.length - DESCRIBED_POINTS;
  return (
    <>
      <div
        class="chart"
        role="img"
        aria-label={`${chart.type} chart of ${chart.series.join(', ')} by ${chart.x}`}
        aria-describedby={descriptionId}
      >
        <canvas ref={canvas} />
      </div>
      {/* The canvas says nothing to a screen reader: its points, in the order drawn, in words. */}
      <p id={descriptionId} class="sr-only chart-points">
        {`${chart.x} from left to right: ${labels.slice(0, DESCRIBED_POINTS).join(', ')}${more > 0 ? ` and ${more} more` : ''}.`}
      </p>
    </>
  );
}
