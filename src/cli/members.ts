import type { Command } from 'commander';
import type { Core } from '../core.js';
import type { MemberView } from '../members/index.js';
import { Errors } from '../errors.js';

type Run = (fn: (s: Core) => Promise<void>) => Promise<void>;
type Out = (text: string) => void;

/** The first line of standard input (a password piped in, never on the command line). */
async function readStdinLine(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0]!;
}

const memberLine = (m: MemberView) => `${m.id}  ${m.accountId}  ${m.role.padEnd(8)}  ${m.email}`;

/** Members and sessions from the command line: what an operator uses without SMTP (decision 1903). */
export function addMemberCommands(program: Command, run: Run, out: Out) {
  const print = (json: boolean, obj: object, human: string) => out(json ? JSON.stringify(obj) : human);
  const member = program.command('member').description('manage the members (people who sign in) of accounts');
  member
    .command('create')
    .requiredOption('--account <id>', 'account id')
    .requiredOption('--email <email>', 'email address (one account per email)')
    .option('--role <role>', 'owner, member or operator', 'member')
    .option('--password-stdin', 'read the password from standard input (else one is generated and shown once)')
    .option('--json', 'print JSON')
    .action((o) =>
      run(async (s) => {
        const password = o.passwordStdin ? await readStdinLine() : undefined;
        const r = await s.members.create(o.account, o.email, o.role, password);
        print(o.json, r, `${memberLine(r.member)}${r.password ? `\npassword (shown once): ${r.password}` : ''}`);
      }),
    );
  member
    .command('list')
    .option('--account <id>', 'only this account')
    .option('--json', 'print JSON')
    .action((o) =>
      run(async (s) => {
        const all = await s.members.list(o.account);
        print(o.json, { members: all }, all.map(memberLine).join('\n') || '(no members)');
      }),
    );
  member
    .command('reset-password <member>')
    .description('set a new password (member id or email) and end every session of the member')
    .option('--password-stdin', 'read the password from standard input (else one is generated and shown once)')
    .option('--json', 'print JSON')
    .action((who: string, o) =>
      run(async (s) => {
        const password = o.passwordStdin ? await readStdinLine() : undefined;
        const r = await s.members.setPassword(who, password);
        print(o.json, r, `${memberLine(r.member)}  sessions revoked: ${r.sessionsRevoked}${r.password ? `\npassword (shown once): ${r.password}` : ''}`);
      }),
    );
  member
    .command('remove <member>')
    .description('remove a member (id or email) and end their sessions')
    .option('--json', 'print JSON')
    .action((who: string, o) =>
      run(async (s) => {
        const m = await s.members.remove(who);
        print(o.json, { member: m }, `removed ${memberLine(m)}`);
      }),
    );

  const session = program.command('session').description('end sign-in sessions');
  session
    .command('revoke [sessionId]')
    .description('revoke one session by id, or every session of --member')
    .option('--member <member>', 'member id or email: revoke all of their sessions')
    .option('--json', 'print JSON')
    .action((id: string | undefined, o) =>
      run(async (s) => {
        if (o.member) {
          const n = await s.members.revokeSessions(o.member);
          return print(o.json, { revoked: n }, `revoked ${n} session(s)`);
        }
        if (!id) throw Errors.invalid('give a session id or --member <id or email>');
        const v = await s.members.sessions.revoke(id);
        print(o.json, { session: v }, `revoked ${v.id}`);
      }),
    );
}
