/**
 * `sqlrecall users add|list|remove|token`: the users of multi-user `serve` and their personal
 * access tokens. A token is printed once, on stdout; only its hash is stored (in the memory
 * store's database). With the embedded memory store, run this while `serve` is stopped.
 */
import { SqlrecallError } from '../../core/errors.js';
import { memoryClient } from '../../server/runtime-deps.js';
import { UserDirectory } from '../../server/users.js';
import type { CliIO } from '../io.js';
import { printJson } from '../output.js';
import { configFrom, type GlobalOptions, reportError } from '../program.js';

/** Subcommands of `users`. */
export const USERS_SUBCOMMANDS = ['add', 'list', 'remove', 'token'] as const;

/** Runs `users <subcommand> [name]`. */
export async function runUsers(
  io: CliIO,
  opts: GlobalOptions & { admin?: boolean },
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
    if (subcommand !== 'list' && !name)
      throw new SqlrecallError('usage', `Give the user name: sqlrecall users ${subcommand} NAME.`);
    const config = configFrom(io, opts);
    client = memoryClient(config);
    const users = new UserDirectory(client);
    switch (subcommand) {
      case 'add': {
        const token = await users.add(name!, {
          team: opts.team,
          teamRole: opts.admin ? 'admin' : 'member',
        });
        out(
          {
            user: name,
            team: opts.team ?? null,
            teamRole: opts.team ? (opts.admin ? 'admin' : 'member') : null,
            token,
          },
          `Added ${name}${opts.team ? ` (team ${opts.team}${opts.admin ? ', admin' : ''})` : ''}. Access token (shown once, keep it secret):\n${token}\n`,
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
      case 'remove': {
        const removed = await users.remove(name!);
        if (!removed) throw new SqlrecallError('not_found', `There is no user ${name!.slice(0, 100)}.`);
        out({ user: name, removed: true }, `Removed ${name} and their tokens (their memories are kept).\n`);
        break;
      }
      default: {
        const list = await users.list();
        out(
          { users: list },
          list.length === 0
            ? 'No users yet: sqlrecall users add NAME\n'
            : `${list.map((u) => `${u.user}${u.team ? `  team ${u.team} (${u.teamRole})` : ''}  ${u.tokens} token(s)`).join('\n')}\n`,
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
