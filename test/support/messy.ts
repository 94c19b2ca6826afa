/**
 * The messy ways small local models wrap SQL (issue 2, point 4). Tests rotate through them so the
 * real extractor sees every form on real queries.
 */

/** One wrapping form: a name and a function from SQL to model text. */
export interface MessyForm {
  name: string;
  wrap(sql: string): string;
}

const oneLine = (sql: string) => sql.replace(/\s*\n\s*/g, ' ');

/** All forms; index i of a question uses `MESSY_FORMS[i % length]`. */
export const MESSY_FORMS: MessyForm[] = [
  { name: 'fence with tag', wrap: (s) => `\`\`\`sql\n${s}\n\`\`\`` },
  {
    name: 'prose, bare fence, explanation',
    wrap: (s) =>
      `Here is the query you asked for:\n\`\`\`\n${s}\n\`\`\`\nThis query joins the tables and returns the matching rows.`,
  },
  { name: 'bold fence', wrap: (s) => `**\`\`\`sql\n${s}\n\`\`\`**` },
  { name: 'SQLQuery label', wrap: (s) => `SQLQuery: ${oneLine(s)}` },
  {
    name: 'think block with decoy',
    wrap: (s) =>
      `<think>\nThe user wants data. Maybe SELECT * FROM wrong_table; no, better:\n</think>\n\`\`\`sql\n${s};\n\`\`\``,
  },
  {
    name: 'lone closing think',
    wrap: (s) =>
      `so I should use a join here.\n</think>\n\n${s};\n\nExplanation: the query filters and aggregates as requested.`,
  },
  { name: 'one-line fence', wrap: (s) => `\`\`\`${oneLine(s)}\`\`\`` },
  { name: 'bare statement', wrap: (s) => s },
  {
    name: 'postgresql tag and note',
    wrap: (s) => `\`\`\`postgresql\n${s};\n\`\`\`\n\nNote: adjust the filters if needed.`,
  },
  { name: 'SQL label on its own line', wrap: (s) => `SQL:\n${s}\n` },
];
