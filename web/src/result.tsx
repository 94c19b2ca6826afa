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
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Cell, Chart, Column } from './api';

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

const show = (v: Cell): string => (v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));

function compare(a: Cell, b: Cell): number {
  if (a === null) return b === null ? 0 : 1;
  if (b === null) return -1;
  const na = Number(a);
  const nb = Number(b);
  if (
    typeof a !== 'object' &&
    typeof b !== 'object' &&
    !Number.isNaN(na) &&
    !Number.isNaN(nb) &&
    show(a) !== '' &&
    show(b) !== ''
  )
    return na - nb;
  return show(a).localeCompare(show(b));
}

function csv(columns: Column[], rows: Cell[][]): string {
  const q = (s: string) => (/[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  return [
    columns.map((c) => q(c.name)).join(','),
    ...rows.map((r) => r.map((v) => q(show(v))).join(',')),
  ].join('\r\n');
}

const PAGE = 20;

export function ResultTable({
  columns,
  rows,
  truncated,
}: {
  columns: Column[];
  rows: Cell[][];
  truncated: boolean;
}) {
  const [sort, setSort] = useState<{ col: number; dir: 1 | -1 } | null>(null);
  const [page, setPage] = useState(0);
  const sorted = useMemo(() => {
    if (!sort) return rows;
    return [...rows].sort((a, b) => sort.dir * compare(a[sort.col] ?? null, b[sort.col] ?? null));
  }, [rows, sort]);
  const pages = Math.max(1, Math.ceil(sorted.length / PAGE));
  const shown = sorted.slice(page * PAGE, page * PAGE + PAGE);
  const download = () => {
    const url = URL.createObjectURL(new Blob([csv(columns, sorted)], { type: 'text/csv' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = 'result.csv';
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };
  return (
    <div class="result">
      <div class="table-wrap">
        <table aria-label="Result">
          <thead>
            <tr>
              {columns.map((c, i) => (
                <th
                  key={c.name + i}
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
                  <td key={j}>{show(v)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div class="table-bar">
        <span>
          {rows.length} row{rows.length === 1 ? '' : 's'}
          {truncated ? ' (truncated)' : ''}
        </span>
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

export function ResultChart({ chart, columns, rows }: { chart: Chart; columns: Column[]; rows: Cell[][] }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const xi = columns.findIndex((c) => c.name === chart.x);
    const instance = new ChartJs(canvas.current, {
      type: chart.type,
      data: {
        labels: rows.map((r) => show(r[xi] ?? null)),
        datasets: chart.series.map((name, i) => {
          const ci = columns.findIndex((c) => c.name === name);
          return {
            label: name,
            data: rows.map((r) => Number(r[ci] ?? 0)),
            backgroundColor: COLORS[i % COLORS.length],
            borderColor: COLORS[i % COLORS.length],
          };
        }),
      },
      options: { responsive: true, maintainAspectRatio: false, animation: false },
    });
    return () => instance.destroy();
  }, [chart, columns, rows]);
  return (
    <div
      class="chart"
      role="img"
      aria-label={`${chart.type} chart of ${chart.series.join(', ')} by ${chart.x}`}
    >
      <canvas ref={canvas} />
    </div>
  );
}
