// Reading the documentation as test/docs/examples.test.ts runs it: the fenced blocks of a Markdown
// file, the shell commands of a block (split as bash splits them: quotes, line continuations,
// comments), which blocks are examples and what each command must answer, the answer blocks that
// follow them, and the two rules a reader's eye applies without thinking: JSON with "..." where a
// value does not matter, and GitHub's anchors for headings.

/** A fenced block: its language, where it sits (1-based lines of the fences) and its text. */
export interface Fence {
  lang: string
  line: number
  endLine: number
  body: string
  /** The reason given by `<!-- not an example: … -->` on the line before the fence. */
  notAnExample: string | undefined
}

const FENCE = /^(\s*)(`{3,})\s*([^`\s]*)[^`]*$/
const NOT_AN_EXAMPLE = /^<!--\s*not an example:\s*(.*?)\s*-->$/

/** Every fenced block of a Markdown text, in order. */
export function fencesOf(markdown: string): Fence[] {
  const lines = markdown.split('\n')
  const fences: Fence[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] ?? '')
    if (!open) continue
    const [, indent = '', ticks = '```', lang = ''] = open
    const closing = new RegExp(`^\\s*\`{${ticks.length},}\\s*$`)
    let end = i + 1
    while (end < lines.length && !closing.test(lines[end] ?? '')) end++
    const previous = lines.slice(0, i).findLast((line) => line.trim() !== '')
    fences.push({
      lang,
      line: i + 1,
      endLine: end + 1,
      body: lines
        .slice(i + 1, end)
        .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line.trimStart()))
        .join('\n'),
      notAnExample: NOT_AN_EXAMPLE.exec(previous?.trim() ?? '')?.[1],
    })
    i = end
  }
  return fences
}

/** One shell command: its code without comments, the comment on it (if any), its first line. */
export interface ShellCommand {
  code: string
  comment: string | undefined
  line: number
}

/**
 * Splits a shell text into commands as bash would: a newline ends a command unless it is escaped
 * (a line continuation), inside quotes, or inside `$(…)`; `#` at the start of a word starts a
 * comment to the end of the line. Lines holding only a comment are no command.
 */
export function commandsOf(text: string, firstLine = 1): ShellCommand[] {
  const commands: ShellCommand[] = []
  let code = ''
  let comment: string | undefined
  let quote: "'" | '"' | undefined
  let depth = 0
  let line = firstLine
  let start = firstLine
  const flush = () => {
    if (code.trim() !== '') commands.push({ code: code.trim(), comment, line: start })
    code = ''
    comment = undefined
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? ''
    const next = text[i + 1]
    if (c === '\n') line++
    if (quote === "'") {
      code += c
      if (c === "'") quote = undefined
    } else if (c === '\\' && next !== undefined) {
      code += c + next
      if (next === '\n') line++
      i++
    } else if (quote === '"') {
      code += c
      if (c === '"') quote = undefined
    } else if (c === "'" || c === '"') {
      quote = c
      code += c
    } else if (c === '$' && next === '(') {
      depth++
      code += '$('
      i++
    } else if (c === ')' && depth > 0) {
      depth--
      code += c
    } else if (c === '#' && (code === '' || /\s$/.test(code))) {
      const end = text.indexOf('\n', i)
      comment = text.slice(i, end === -1 ? text.length : end)
      i = (end === -1 ? text.length : end) - 1
    } else if (c === '\n' && depth === 0) {
      flush()
      start = line
    } else {
      code += c
      if (code.trim() === '') start = line
    }
  }
  flush()
  return commands
}

const isCurl = (code: string) => /^curl\s/.test(code)
const isAssignment = (code: string) => /^[A-Za-z_][A-Za-z0-9_]*=\$\(/.test(code) && code.endsWith(')')
/** `-N` / `--no-buffer`: curl prints as it receives, and the answer never ends on its own. */
const isStream = (code: string) => isCurl(code) && /\s(-N|--no-buffer)(\s|$)/.test(code)

export interface ExampleCommand extends ShellCommand {
  /** The status its answer must have: the one its comment starts with, else any 2xx. */
  status: number | '2xx'
  stream: boolean
}

export type Step =
  | { kind: 'example'; line: number; commands: ExampleCommand[]; answer: { line: number; json: string } | undefined }
  /** A ```js block: a program for node, run as a stream is (see test/docs/examples.test.ts). */
  | { kind: 'program'; line: number; code: string }
  | { kind: 'text'; line: number; text: string }

export interface DocumentPlan {
  file: string
  steps: Step[]
  skipped: { line: number; reason: string }[]
  /** Blocks the rules refuse: a curl the test would not run, a marker without a reason. */
  errors: string[]
}

/** Languages a reader would take for shell: a curl in one of them must be in a ```sh block instead. */
const SHELL_LIKE = new Set(['', 'bash', 'shell', 'console', 'zsh'])

/** What test/docs/examples.test.ts runs of one document, in the document's order. */
export function planDocument(file: string, markdown: string): DocumentPlan {
  const fences = fencesOf(markdown)
  const lines = markdown.split('\n')
  const plan: DocumentPlan = { file, steps: [], skipped: [], errors: [] }
  fences.forEach((fence, index) => {
    const where = `${file}:${fence.line}`
    if (fence.lang === 'text') plan.steps.push({ kind: 'text', line: fence.line, text: fence.body })
    if (fence.lang === 'js') {
      if (fence.notAnExample === undefined) plan.steps.push({ kind: 'program', line: fence.line, code: fence.body })
      else if (fence.notAnExample === '') plan.errors.push(`${where}: "not an example" without a reason`)
      else plan.skipped.push({ line: fence.line, reason: fence.notAnExample })
      return
    }
    if (fence.lang !== 'sh') {
      if (SHELL_LIKE.has(fence.lang) && /^\s*curl\s/m.test(fence.body)) plan.errors.push(`${where}: a curl example in a \`\`\`${fence.lang} block: label it sh`)
      return
    }
    const commands = commandsOf(fence.body, fence.line + 1)
    // A block that only sets variables (a token) for the examples after it is one too.
    const example = commands.some((command) => isCurl(command.code)) || (commands.length > 0 && commands.every((command) => isAssignment(command.code)))
    if (!example) return
    if (fence.notAnExample !== undefined) {
      if (fence.notAnExample === '') plan.errors.push(`${where}: "not an example" without a reason`)
      else plan.skipped.push({ line: fence.line, reason: fence.notAnExample })
      return
    }
    const others = commands.filter((command) => !isCurl(command.code) && !isAssignment(command.code))
    if (others.length > 0) {
      plan.errors.push(`${where}: curl mixed with other commands (${others.map((command) => command.code.split(/\s/)[0]).join(', ')}): split the block`)
      return
    }
    const following = fences[index + 1]
    const between = following === undefined ? [] : lines.slice(fence.endLine, following.line - 1)
    const answer = following?.lang === 'json' && between.every((text) => text.trim() === '') ? { line: following.line, json: following.body } : undefined
    plan.steps.push({
      kind: 'example',
      line: fence.line,
      answer,
      commands: commands.map((command) => {
        const status = /^#\s*(\d{3})\b/.exec(command.comment ?? '')?.[1]
        return { ...command, status: status === undefined ? '2xx' : Number(status), stream: isStream(command.code) }
      }),
    })
  })
  return plan
}

/** What an answer printed with `-i` holds after its header blocks (a 100 Continue may come first). */
export function bodyOf(output: string): string {
  let body = output
  while (body.startsWith('HTTP/')) {
    const end = body.search(/\r?\n\r?\n/)
    if (end === -1) return ''
    body = body.slice(end).replace(/^\r?\n\r?\n/, '')
  }
  return body
}

/** The documents' wildcard: any value, any further members of an object, any further items of an array. */
export const ANY = '...'

/**
 * Where `actual` departs from `expected`, as JSON paths: equal values, except that "..." matches
 * any value, a "...": "..." member any members its object adds, and a last "..." item any items
 * its array adds.
 */
export function jsonDifferences(expected: unknown, actual: unknown, path = '$'): string[] {
  if (expected === ANY) return []
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${path}: expected an array, got ${JSON.stringify(actual)}`]
    const open = expected.at(-1) === ANY
    const items = open ? expected.slice(0, -1) : expected
    if (open ? actual.length < items.length : actual.length !== items.length) {
      return [`${path}: expected ${open ? 'at least ' : ''}${items.length} items, got ${actual.length}`]
    }
    return items.flatMap((item, i) => jsonDifferences(item, actual[i], `${path}[${i}]`))
  }
  if (typeof expected === 'object' && expected !== null) {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return [`${path}: expected an object, got ${JSON.stringify(actual)}`]
    const members = expected as Record<string, unknown>
    const got = actual as Record<string, unknown>
    const named = Object.keys(members).filter((key) => key !== ANY)
    const differences = named.flatMap((key) => (key in got ? jsonDifferences(members[key], got[key], `${path}.${key}`) : [`${path}.${key}: missing`]))
    if (members[ANY] !== ANY)
      differences.push(
        ...Object.keys(got)
          .filter((key) => !(key in members))
          .map((key) => `${path}.${key}: not in the document`),
      )
    return differences
  }
  return Object.is(expected, actual) ? [] : [`${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`]
}

/** The anchor GitHub gives a heading: its text lower-cased, punctuation dropped, spaces as hyphens. */
export function headingAnchor(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-')
}

/** The anchors of a Markdown text's headings (outside fenced blocks), repeated ones numbered as GitHub does. */
export function anchorsOf(markdown: string): Set<string> {
  const fenced = new Set(fencesOf(markdown).flatMap((fence) => Array.from({ length: fence.endLine - fence.line + 1 }, (_, i) => fence.line + i)))
  const anchors = new Set<string>()
  markdown.split('\n').forEach((text, i) => {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text)
    if (!heading || fenced.has(i + 1)) return
    const anchor = headingAnchor(heading[1] ?? '')
    let unique = anchor
    for (let n = 1; anchors.has(unique); n++) unique = `${anchor}-${n}`
    anchors.add(unique)
  })
  return anchors
}

/** The targets of a Markdown text's links and images, outside fenced blocks and code spans, with their lines. */
export function linksOf(markdown: string): { line: number; target: string }[] {
  const fenced = new Set(fencesOf(markdown).flatMap((fence) => Array.from({ length: fence.endLine - fence.line + 1 }, (_, i) => fence.line + i)))
  return markdown.split('\n').flatMap((text, i) => {
    if (fenced.has(i + 1)) return []
    const prose = text.replace(/(`+)[^`]*?\1/g, '')
    return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => ({ line: i + 1, target: match[1] ?? '' }))
  })
}
