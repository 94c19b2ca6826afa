/**
 * The README's settings table, rendered from the declarations in `settings.ts`. Written into
 * README.md between the markers below by `npm run docs:settings`; a test fails when the README's
 * copy differs from this rendering.
 */
import { ENVIRONMENT_ONLY, SETTINGS, type SettingDeclaration } from './settings.js';

/** The line before the generated table in README.md. */
export const SETTINGS_START = '<!-- settings:start -->';
/** The line after the generated table in README.md. */
export const SETTINGS_END = '<!-- settings:end -->';

/** A cell's text with the characters that would break a Markdown table row escaped. */
const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** How the table shows a setting's default. */
function defaultCell(setting: SettingDeclaration): string {
  if (setting.defaultText !== undefined) return setting.defaultText;
  if (setting.default === undefined || setting.default === '') return 'none';
  return `\`${String(setting.default)}\``;
}

/** The Markdown table of every setting and process-level variable, one row each, ending in a newline. */
export function settingsTable(): string {
  const rows = [
    '| variable | flag | default | meaning |',
    '| --- | --- | --- | --- |',
    ...Object.values(SETTINGS as Record<string, SettingDeclaration>).map((s) => {
      const flag = s.flag === undefined ? '—' : `\`${s.flag}\``;
      return `| \`${s.env}\` | ${cell(flag)} | ${cell(defaultCell(s))} | ${cell(s.help)} |`;
    }),
    ...ENVIRONMENT_ONLY.map(
      (v) =>
        `| ${v.env
          .split(' / ')
          .map((name) => `\`${name}\``)
          .join(' / ')} | — | ${cell(v.defaultText)} | ${cell(v.help)} |`,
    ),
  ];
  return `${rows.join('\n')}\n`;
}

/**
 * `readme` with the text between the markers replaced by the current table.
 * @throws Error when either marker is missing or they are out of order
 */
export function withSettingsTable(readme: string): string {
  const start = readme.indexOf(SETTINGS_START);
  const end = readme.indexOf(SETTINGS_END);
  if (start < 0 || end < start) {
    throw new Error(`README.md needs the lines ${SETTINGS_START} and ${SETTINGS_END}, in that order.`);
  }
  return `${readme.slice(0, start + SETTINGS_START.length)}\n${settingsTable()}${readme.slice(end)}`;
}
