/**
 * `sqlrecall users add|list|remove|token|admin`: the users of multi-user `serve`, their personal
 * access tokens, and who administers sqlrecall (reads the audit trail and the policy status). A token is printed once, on stdout; only its hash is stored (in the memory
 * store's database). With the embedded memory store, run this while `serve` is stopped.
 */

import { type RestoredMemories, UserDirectory } from '../../app/users.js';
import { isSqlrecallError, SqlrecallError } from '../../core/errors.js';
import { memoryClient } from '../../runtime/memory-runtime.js';
import { closest } from '../../sql/identifiers.js';
import { configFrom } from '../config-from.js';
import type { CliIO } from '../io.js';
import { printJson } from '../output.js';
import type { GlobalOptions } from '../program.js';
import { reportError } from '../report.js';

/** Subcommands of `users`. */
export const USERS_SUBCOMMANDS = ['add', 'list', 'remove', 'token', 'admin'] as const;

/** Runs `users <subcommand> [name]`. */
export async function runUsers(
  io: CliIO,
  opts: GlobalOptions & { admin?: boolean; teamAdmin?: boolean; restoreMemories?: boolean; revoke?: boolean },
  subcommand: string,
  name: string | undefined,
): Promise<number> {
  const json = Boolean(opts.json);
  const out = (doc: unknown, text: string) => (json ? printJson(io, doc) : io.stdout.write(text));
  let client: ReturnType<typeof memoryClient> | undefined;
  try {
    if (!(USERS_SUBCOMMANDS as readonly string[]).includes(subcommand))
      throw new SqlrecallError(
        'usage',
        `Unknown users command "${subcommand}"; use one of ${USERS_SUBCOMMANDS.join(', ')}.`,
      );
    if (opts.revoke && subcommand !== 'admin')
      throw new SqlrecallError('usage', '--revoke goes with `users admin NAME`.');
    if (subcommand !== 'list' && !name)
      throw new SqlrecallError('usage', `Give the user name: sqlrecall users ${subcommand} NAME.`);
    const config = configFrom(io, opts);
    client = memoryClient(config);
    const users = new UserDirectory(client);
    switch (subcommand) {
      case 'add': {
        // An administrator of sqlrecall also administers their own team.
        const teamAdmin = Boolean(opts.teamAdmin || opts.admin);
        const added = await users.addUser(name!, {
          team: opts.team,
          teamRole: teamAdmin ? 'admin' : 'member',
          admin: Boolean(opts.admin),
          restoreMemories: Boolean(opts.restoreMemories),
        });
        const restored = added.restored;
        out(
          {
            user: added.user,
            team: opts.team ?? null,
            teamRole: opts.team ? (teamAdmin ? 'admin' : 'member') : null,
            admin: Boolean(opts.admin),
            token: added.token,
            ...(restored ? { restored } : {}),
          },
          `Added ${added.user}${opts.team ? ` (team ${opts.team}${teamAdmin ? ', team admin' : ''})` : ''}${opts.admin ? ', an administrator (reads the audit trail)' : ''}. Access token (shown once, keep it secret):\n${added.token}\n${restored ? restoredText(added.user, restored) : ''}`,
        );
        break;
      }
      case 'token': {
        const token = await users.rotate(name!);
        out(
          { user: name, token },
          `New access token for ${name} (earlier tokens no longer work; shown once):\n${token}\n`,
        );
        break;
      }
      case 'admin': {
        const admin = !opts.revoke;
        const user = await setAdmin(users, name!, admin);
        out(
          { user, admin },
          admin
            ? `${user} is now an administrator: reads the audit trail and the policy status over HTTP (\`users admin ${user} --revoke\` undoes it).\n`
            : `${user} is no longer an administrator.\n`,
        );
        break;
      }
      case 'remove': {
        const removed = await users.remove(name!);
        if (!removed) throw new SqlrecallError('not_found', `There is no user ${name!.slice(0, 100)}.`);
        out(
          { user: removed.user, removed: true, archivedMemories: removed.archivedMemories },
          `Removed ${removed.user} and their tokens. Their ${removed.archivedMemories} memories and conversations are archived, not deleted: a new account of this name starts empty; \`users add ${removed.user} --restore-memories\` brings them back.\n`,
        );
        break;
      }
      default: {
        const list = await users.list();
        out(
          { users: list },
          list.length === 0
            ? 'No users yet: sqlrecall users add NAME\n'
            : `${list.map((u) => `${u.user}${u.admin ? '  administrator' : ''}${u.team ? `  team ${u.team} (${u.teamRole})` : ''}  ${u.tokens} token(s)`).join('\n')}\n`,
        );
      }
    }
    return 0;
  } catch (error) {
    return reportError(io, json, error);
  } finally {
    await client?.close().catch(() => undefined);
  }
}

/** The sentence saying what `--restore-memories` brought back. */
function restoredText(user: string, restored: RestoredMemories): string {
  if (restored.archivedAt === null)
    return `No archived memories of a removed ${user} were found; the account starts empty.\n`;
  const kinds = Object.entries(restored.kinds)
    .map(([kind, n]) => `${n} ${kind}`)
    .join(', ');
  return `Restored ${restored.memories} memories${kinds ? ` (active: ${kinds})` : ''} and ${restored.conversations} conversations of the ${user} account removed at ${restored.archivedAt}.\n`;
}

/**
 * Grants or revokes the administrator right of `name`.
 * @returns the stored name
 * @throws SqlrecallError `not_found` (exit 2) for an unknown user, naming the closest registered ones
 */
async function setAdmin(users: UserDirectory, name: string, admin: boolean): Promise<string> {
  try {
    return await users.setAdmin(name, admin);
  } catch (error) {
    if (!isSqlrecallError(error, 'not_found')) throw error;
    const near = closest(
      name,
      (await users.list()).map((u) => ({ key: u.user, text: u.user })),
    );
    throw new SqlrecallError('not_found', `There is no user ${name.slice(0, 100)}.`, {
      details: {
        hint: near.length > 0 ? `Did you mean ${near.join(', ')}?` : 'See `sqlrecall users list`.',
      },
    });
  }
}
