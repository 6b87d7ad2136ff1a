// The rules a data file's rows are checked by, in both of import's passes, and a checked row as its
// table's columns. The rules are the API's: the features' item schemas, ids bounded as
// src/core/ids.ts bounds them (what both stores and every transport accept), and instants read as
// src/core/instant.ts reads them (and stored as it writes them, so sorting and cursors work).
import { type TSchema, Type } from 'typebox'
import { Comment } from '../comments/comments.schemas.js'
import { MAX_ID } from '../core/ids.js'
import { INSTANT_DESCRIPTION, parseInstant } from '../core/instant.js'
import { Id, Nullable } from '../core/schema-types.js'
import { bodyAjv, toErrorDetails } from '../core/validation.js'
import { Post } from '../posts/posts.schemas.js'
import { Todo } from '../todos/todos.schemas.js'
import { User } from '../users/users.schemas.js'
import { nameProblems, toContent } from './comment-subject.js'
import { SECTIONS, type Section } from './json-sections.js'

export type Format = 'threadline' | 'jsonplaceholder'
export type Row = Record<string, unknown>

/** An id a row may be written with: one the API can name (parseId's range). */
const StoredId = Type.Integer({ ...Id, maximum: MAX_ID })
const { createdAt: Timestamp } = User.properties

const threadlineRows: Record<Section, TSchema> = {
  users: Type.Object(
    { ...User.properties, id: StoredId, passwordHash: Nullable(Type.String({ minLength: 1, maxLength: 500 })) },
    { additionalProperties: false },
  ),
  posts: Type.Object({ ...Post.properties, id: StoredId, userId: StoredId }, { additionalProperties: false }),
  // `author` is what the API embeds; an export may carry it, authorId says the same.
  comments: Type.Object(
    {
      ...Comment.properties,
      id: StoredId,
      postId: StoredId,
      authorId: StoredId,
      author: Type.Optional(Type.Object({ ...Comment.properties.author.properties, id: StoredId })),
    },
    { additionalProperties: false },
  ),
  todos: Type.Object({ ...Todo.properties, id: StoredId, userId: StoredId }, { additionalProperties: false }),
}

/** JSONPlaceholder's rows: the fields Threadline keeps are checked; the rest are dropped unread. */
const placeholderRows: Record<Section, TSchema> = {
  users: Type.Object({ id: StoredId, name: User.properties.name, email: User.properties.email }),
  posts: Type.Object({ id: StoredId, userId: StoredId, title: Post.properties.title, body: Post.properties.content }),
  // A comment's `name` is its subject line, kept in its content (comment-subject.ts).
  comments: Type.Object({ id: StoredId, postId: StoredId, name: Type.Optional(Type.String()), email: User.properties.email, body: Comment.properties.content }),
  todos: Type.Object({ id: StoredId, userId: StoredId, title: Todo.properties.text, completed: Type.Boolean() }),
}

const Marker = Type.Object({ version: Type.Literal(1), exportedAt: Type.Optional(Timestamp) })

type Validator = ReturnType<typeof bodyAjv.compile>
interface RowRule {
  validate: Validator
  /** The fields that hold an instant. */
  instants: string[]
}

const ruleOf = (schema: TSchema): RowRule => ({
  validate: bodyAjv.compile(schema),
  instants: Object.entries((schema as { properties: Record<string, { format?: string }> }).properties)
    .filter(([, field]) => field.format === 'date-time')
    .map(([name]) => name),
})
const rules = (schemas: Record<Section, TSchema>) => Object.fromEntries(SECTIONS.map((s) => [s, ruleOf(schemas[s])])) as Record<Section, RowRule>
const ROW_RULES: Record<Format, Record<Section, RowRule>> = { threadline: rules(threadlineRows), jsonplaceholder: rules(placeholderRows) }
const MARKER_RULE = ruleOf(Marker)

/** The longest string any field of any row accepts, in characters: anything longer is refused unread. */
export const LONGEST_VALUE = Math.max(...[...Object.values(threadlineRows), ...Object.values(placeholderRows)].map(longestString))

function longestString(schema: unknown): number {
  if (typeof schema !== 'object' || schema === null) return 0
  const own = (schema as { maxLength?: unknown }).maxLength
  return Math.max(typeof own === 'number' ? own : 0, ...Object.values(schema).map(longestString))
}

/** A problem of a value, at `field` (a path inside it, '' for the value itself). */
export type Report = (field: string, message: string) => void

/** Checks `value` by `rule`, reporting each problem; whether it passed. */
function check(rule: RowRule, value: unknown, report: Report): boolean {
  let ok = true
  const failed = new Set<string>()
  if (!rule.validate(value)) {
    ok = false
    for (const { field, message } of toErrorDetails(rule.validate.errors ?? [])) {
      failed.add(field)
      report(field, message)
    }
  }
  if (typeof value !== 'object' || value === null) return ok
  for (const field of rule.instants) {
    const text = (value as Row)[field]
    if (typeof text === 'string' && !failed.has(field) && parseInstant(text) === undefined) {
      ok = false
      report(field, `must be ${INSTANT_DESCRIPTION}`)
    }
  }
  return ok
}

export const checkMarker = (value: unknown, report: Report): boolean => check(MARKER_RULE, value, report)

/** Checks a row of `section` in `format`, reporting each problem; whether it may be written. */
export function checkRow(format: Format, section: Section, value: unknown, report: Report): boolean {
  let ok = check(ROW_RULES[format][section], value, report)
  if (ok && format === 'jsonplaceholder' && section === 'comments') {
    const { name, body } = value as { name?: string; body: string }
    for (const problem of nameProblems(name, body)) {
      ok = false
      report('name', problem)
    }
  }
  return ok
}

/** A field of a JSON path: `users[0]` and `id` make `users[0].id`, and `[2]` makes `users[0][2]`. */
export const joinPath = (path: string, field: string): string => (field === '' ? path : `${path}${field.startsWith('[') ? '' : '.'}${field}`)

const instant = (text: unknown) => (text === null ? null : (parseInstant(text as string) as string))

/** A checked row as the table's columns. `authorOf` gives a JSONPlaceholder comment's author by e-mail. */
export function toColumns(format: Format, section: Section, row: Row, authorOf: (email: string) => number | undefined, now: string): Row {
  if (format === 'threadline') {
    const times = { created_at: instant(row.createdAt), updated_at: instant(row.updatedAt) }
    switch (section) {
      case 'users':
        return {
          id: row.id,
          name: row.name,
          email: row.email,
          age: row.age,
          avatar: row.avatar,
          role: row.role,
          password_hash: row.passwordHash ?? null,
          ...times,
        }
      case 'posts':
        return {
          id: row.id,
          user_id: row.userId,
          title: row.title,
          content: row.content,
          status: row.status,
          published_at: instant(row.publishedAt),
          ...times,
        }
      case 'comments':
        return { id: row.id, post_id: row.postId, author_id: row.authorId, content: row.content, ...times }
      case 'todos':
        return { id: row.id, user_id: row.userId, text: row.text, completed: row.completed ? 1 : 0, ...times }
    }
  }
  const times = { created_at: now, updated_at: now }
  switch (section) {
    case 'users':
      return { id: row.id, name: row.name, email: row.email, age: null, avatar: null, role: 'user', password_hash: null, ...times }
    case 'posts':
      return { id: row.id, user_id: row.userId, title: row.title, content: row.body, status: 'published', published_at: now, ...times }
    case 'comments':
      return {
        id: row.id,
        post_id: row.postId,
        author_id: authorOf(String(row.email).toLowerCase()),
        content: toContent(row.name as string | undefined, row.body as string),
        ...times,
      }
    case 'todos':
      return { id: row.id, user_id: row.userId, text: row.title, completed: row.completed ? 1 : 0, ...times }
  }
}
