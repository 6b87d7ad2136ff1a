// A database worth exporting: the demo data of `threadline seed`, plus the rows an export could get
// wrong — a user with a password (and a live token, which must never leave), a null age, a draft
// post, text in several scripts with quotes, backslashes, newlines and U+2028, a completed todo, a
// user with a whole profile (its objects kept as JSON text) and a guest comment (no author, an e-mail).
// Written as an operator would: the `threadline` command, then plain inserts on the store itself.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { loadConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/create-database.js'
import { BIN } from '../helpers/serve-process.js'

const run = promisify(execFile)

export function threadline(url: string, args: string[]) {
  return run(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, DATABASE_URL: url }, maxBuffer: 64 * 1024 * 1024 })
}

export const PASSWORD = 'a long enough password'
/** Text that JSON must escape, and characters outside the Basic Multilingual Plane. */
export const AWKWARD_TEXT = 'Zoë says "hi" \\ back\nslash, 日本語, emoji 🧵🌍, and a line separator \u2028 here'

export interface EdgeRows {
  user: { id: number; email: string }
  /** The token as the client holds it; only its SHA-256 is stored. */
  token: string
  draftPostId: number
  commentId: number
  todoId: number
  /** A user with every field of the profile. */
  profiledUserId: number
  /** A comment by no user: author_id null, its commenter's e-mail. */
  guestCommentId: number
}

/** The profile of the user with one: JSONPlaceholder's first user's. */
export const PROFILE = {
  username: 'Bret',
  phone: '1-770-736-8031 x56442',
  website: 'hildegard.org',
  address: { street: 'Kulas Light', suite: 'Apt. 556', city: 'Gwenborough', zipcode: '92998-3874', geo: { lat: '-37.3159', lng: '81.1496' } },
  company: { name: 'Romaguera-Crona', catchPhrase: 'Multi-layered client-server neural-net', bs: 'harness real-time e-markets' },
}

export async function seedWithEdgeRows(url: string): Promise<EdgeRows> {
  await threadline(url, ['seed'])
  const { stdout } = await threadline(url, ['users', 'create', '--name', 'Zoë Ünïcode 🧵', '--email', 'zoe@example.com', '--password', PASSWORD])
  const user = JSON.parse(stdout) as { id: number; email: string }
  const token = (await threadline(url, ['tokens', 'create', '--user', user.email])).stdout.trim()
  const database = openDatabase(loadConfig({ DATABASE_URL: url }).database)
  try {
    const { db } = database
    const at = '2026-11-01T10:20:30.456Z'
    const draft = await db
      .insertInto('posts')
      .values({ user_id: user.id, title: 'A draft: "not yet" 🚧', content: AWKWARD_TEXT, status: 'draft', published_at: null, created_at: at, updated_at: at })
      .returning('id')
      .executeTakeFirstOrThrow()
    const comment = await db
      .insertInto('comments')
      .values({
        post_id: 1,
        author_id: user.id,
        content: `${AWKWARD_TEXT} — and more than sixty characters so the subject line is cut`,
        created_at: at,
        updated_at: at,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
    const todo = await db
      .insertInto('todos')
      .values({ user_id: user.id, text: 'Ship the export ✅', completed: 1, created_at: at, updated_at: at })
      .returning('id')
      .executeTakeFirstOrThrow()
    const profiled = await db
      .insertInto('users')
      .values({
        name: 'Leanne Profile',
        email: 'sincere@april.example',
        role: 'user',
        ...PROFILE,
        address: JSON.stringify(PROFILE.address),
        company: JSON.stringify(PROFILE.company),
        created_at: at,
        updated_at: at,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
    const guest = await db
      .insertInto('comments')
      .values({
        post_id: 1,
        author_id: null,
        email: 'Eliseo@gardner.example',
        content: 'id labore ex et quam laborum\n\nlaudantium enim',
        created_at: at,
        updated_at: at,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
    return { user, token, draftPostId: draft.id, commentId: comment.id, todoId: todo.id, profiledUserId: profiled.id, guestCommentId: guest.id }
  } finally {
    await database.close()
  }
}
