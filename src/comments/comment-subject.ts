// JSONPlaceholder's comments have a subject line, `name`, that Threadline's have not. An import keeps
// it as the first paragraph of the comment's content (the name, a blank line, the body), where the
// API shows it and search finds it; an export in JSONPlaceholder's format gives it back from there.
// A name the body starts with is in the content already (an export writes a comment without such a
// paragraph with its first 60 characters as its name), so it is not written twice; so an export
// imports back to the same content. A column would carry the name too, at the cost of a field in
// every comment of both APIs that only imported comments fill (docs/decisions/0017-streaming-import.md).
import { Comment } from './comments.schemas.js'
import { Line } from '../core/schema-types.js'
import { bodyAjv, toErrorDetails } from '../core/validation.js'

const BLANK_LINE = '\n\n'
const Content = Comment.properties.content
const CONTENT_MAX = (Content as { maxLength?: number }).maxLength as number
/** The name given to a comment without a subject paragraph: its first characters, as JSONPlaceholder's are short. */
const INVENTED_NAME_LENGTH = 60

/** A subject is one line of text, as a post's title is. */
const Subject = Line({ maxLength: CONTENT_MAX })
const isSubject = bodyAjv.compile(Subject)
const isContent = bodyAjv.compile(Content)

const characters = (text: string) => Array.from(text).length

/** A comment's content for a JSONPlaceholder comment's `name` and `body`. */
export function toContent(name: string | undefined, body: string): string {
  return name === undefined || body.startsWith(name) ? body : `${name}${BLANK_LINE}${body}`
}

/** What is wrong with a (checked) body's `name`, if anything: the problems of the `name` field. */
export function nameProblems(name: string | undefined, body: string): string[] {
  if (toContent(name, body) === body) return []
  if (!isSubject(name)) return toErrorDetails(isSubject.errors ?? []).map(({ message }) => message)
  const length = characters(toContent(name, body))
  return length > CONTENT_MAX ? [`is too long for this body: the comment would be ${length} characters, more than ${CONTENT_MAX}`] : []
}

/** A comment's content as a JSONPlaceholder comment's `name` and `body` (toContent's inverse). */
export function toNameAndBody(content: string): { name: string; body: string } {
  const end = content.indexOf(BLANK_LINE)
  if (end > 0) {
    const name = content.slice(0, end)
    const body = content.slice(end + BLANK_LINE.length)
    if (isSubject(name) && isContent(body) && !body.startsWith(name)) return { name, body }
  }
  // The first characters (code points: an emoji is never cut in half).
  return { name: Array.from(content).slice(0, INVENTED_NAME_LENGTH).join(''), body: content }
}
