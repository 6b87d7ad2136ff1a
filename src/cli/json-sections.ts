// Walks a data file's top-level object with stream-json's tokenizer, one row at a time: the file is
// never held whole, only the row being read. Import reads a file through this twice (check, then
// write). Strings, keys and numbers arrive in chunks and are put together here, so that one longer
// than any field accepts, a row larger than any row, or nesting deeper than any row's is refused as
// soon as it is seen, without being held (a 100 MB string would otherwise fill the bounded heap).
import { createReadStream, statSync } from 'node:fs'
import { Readable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import Assembler from 'stream-json/assembler.js'
import { jsonParser } from 'stream-json/parser.js'
import verifier from 'stream-json/utils/verifier.js'
import { withThousands } from '../core/digits.js'
import { listed } from './words.js'

export const MARKER = 'threadline'
/** The resources of JSONPlaceholder's /db document, any of which a file in its format may hold. */
const JSONPLACEHOLDER_RESOURCES = ['posts', 'comments', 'albums', 'photos', 'todos', 'users'] as const

/**
 * The keys of a data file that are JSONPlaceholder's resources and none of `sections` (the known
 * ones, the features' data sections): counted and skipped, never assembled.
 */
export const foreignSections = (sections: readonly NamedSection[]): string[] =>
  JSONPLACEHOLDER_RESOURCES.filter((name) => !sections.some((section) => section.name === name))

/** Levels of nesting a file may have: a JSONPlaceholder user's `address.geo` is at 5. */
const MAX_DEPTH = 16

/** The path of a problem of the file as a whole. */
export const TOP_LEVEL = '(top level)'

/** The problem of a file whose top level is not an object, `names` being the sections it may have. */
export const notAnObject = (names: readonly string[]): string => `must be an object with ${listed(names)}`

export interface SectionLimits {
  /** The longest string (in characters) any field accepts: anything longer is refused unread. */
  longestValue: number
}

/** A section the walk knows, by its key; the visitor is handed the object itself. */
export interface NamedSection {
  readonly name: string
}

export interface SectionVisitor<S extends NamedSection> {
  /** The marker's value, whenever it comes. */
  onMarker?(value: unknown): void
  /** A row of a section, in file order; `index` is its place in the section's array. */
  onRow?(section: S, index: number, row: unknown): void | Promise<void>
  /** Whether a section's rows are wanted; the others are parsed but not assembled. */
  wants?(section: S): boolean
  /** A section begins (in file order) and ends, after `rows` rows. */
  onSection?(section: S): void
  onSectionEnd?(section: S, rows: number): void | Promise<void>
  /** A foreign section (foreignSections), skipped: how many items it had. */
  onSkipped?(key: string, items: number): void
  /**
   * Something that is not a data file's: an unknown key, a section that is no array, a value too
   * long, a row too large or too deep (its row is then not handed to onRow).
   */
  onShapeProblem(path: string, message: string): void
  /** Bytes of the file read so far, of `total`. */
  onBytes?(read: number, total: number): void
}

/** A file that is not JSON: the parser's words and where the verifier finds the fault. */
export class BadJsonError extends Error {}

type Token = { name: string; value?: unknown }
/**
 * What the tokenizer is given at the end of the text (and returns for "no tokens"): stream-chain's
 * registered symbol, the protocol its stages share.
 */
const END = Symbol.for('object-stream.none')
/** A key, string or number that was longer than `longestValue`: dropped as it streamed by. */
const TOO_LONG = 'tooLong'

/**
 * Puts streamed keys, strings and numbers together as stream-json's packed tokens (keyValue,
 * stringValue, numberValue), or a TOO_LONG token once one passes the limit. The limit is in UTF-16
 * code units, twice the characters a field may hold (a character takes at most two): past it, the
 * value is too long whatever it holds, and nearer values are judged exactly by the row's schema.
 */
function createPacker(longestValue: number): (token: Token) => Token | undefined {
  const limit = 2 * longestValue
  let parts: string[] = []
  let length = 0
  return (token) => {
    switch (token.name) {
      case 'startKey':
      case 'startString':
      case 'startNumber':
        parts = []
        length = 0
        return undefined
      case 'stringChunk':
      case 'numberChunk': {
        const chunk = token.value as string
        length += chunk.length
        if (length <= limit) parts.push(chunk)
        else parts = []
        return undefined
      }
      case 'endKey':
      case 'endString':
      case 'endNumber': {
        if (length > limit) return { name: TOO_LONG, value: token.name }
        const value = parts.length === 1 ? parts[0] : parts.join('')
        parts = []
        return { name: token.name === 'endKey' ? 'keyValue' : token.name === 'endString' ? 'stringValue' : 'numberValue', value }
      }
      default:
        return token
    }
  }
}

/** The walker's reading of the top-level object, fed one packed token at a time. */
class Walk<S extends NamedSection> {
  // Where the walker is: 0 before the top-level object, 1 inside it, deeper inside a value.
  depth = 0
  key: string | undefined
  keyTooLong = false
  // What the value under the current top-level key is for.
  mode: 'marker' | 'rows' | 'foreign' | 'skip' | 'none' = 'none'
  section: S | undefined
  wanted = true
  index = 0
  assembler: Assembler | undefined
  /** The key of the field being read at a row's own level, for a problem's path. */
  field: string | undefined
  /** Why the row (or marker) being read is refused; it is then no longer assembled. */
  refused: { path: string; message: string } | undefined
  /** Characters and tokens of the row (or marker) being read. */
  size = 0
  /** Set when the rest of the file cannot be read safely. */
  stopped = false

  private readonly byName: ReadonlyMap<string, S>
  private readonly foreign: readonly string[]

  constructor(
    private readonly sections: readonly S[],
    private readonly visitor: SectionVisitor<S>,
    private readonly limits: SectionLimits,
  ) {
    this.byName = new Map(sections.map((section) => [section.name, section]))
    this.foreign = foreignSections(sections)
  }

  /**
   * Code units a row (or the marker) may hold, its keys and tokens counted too: its longest field
   * takes at most twice longestValue, and a valid row holds little else; twice that and some is
   * more than any valid row, and what a JSONPlaceholder row carries to be dropped.
   */
  private get largestRow() {
    return 4 * this.limits.longestValue + 4096
  }

  private rowPath(): string {
    return this.mode === 'marker' ? MARKER : `${this.section?.name}[${this.index}]`
  }

  private refuse(path: string, message: string) {
    if (this.refused !== undefined) return
    this.refused = { path, message }
    this.assembler = undefined
  }

  private stop(path: string, message: string) {
    this.visitor.onShapeProblem(path, message)
    this.stopped = true
  }

  /** One token; a promise only when the visitor returned one. */
  take(token: Token): void | Promise<void> {
    const { name } = token
    const opens = name === 'startObject' || name === 'startArray'
    if (opens && this.depth >= MAX_DEPTH) {
      const path = this.mode === 'rows' || this.mode === 'marker' ? this.rowPath() : (this.key ?? TOP_LEVEL)
      return this.stop(path, `is nested deeper than ${MAX_DEPTH} levels; the rest of the file was not read`)
    }
    if (this.depth === 0) {
      if (name !== 'startObject') return this.stop(TOP_LEVEL, notAnObject(this.sections.map((section) => section.name)))
      this.depth = 1
      return
    }
    if (this.depth === 1) return this.topLevel(token, opens)
    if (this.mode === 'foreign' && this.depth === 2) {
      if (name === 'endArray') {
        this.depth = 1
        this.mode = 'none'
        this.visitor.onSkipped?.(this.key as string, this.index)
        return
      }
      if (opens) this.depth = 3
      this.index++
      return
    }
    if (this.mode === 'rows' && this.depth === 2) {
      if (name === 'endArray') {
        this.depth = 1
        this.mode = 'none'
        return this.visitor.onSectionEnd?.(this.section as S, this.index)
      }
      if (opens) {
        this.depth = 3
        this.refused = undefined
        this.field = undefined
        this.size = 1
        if (this.wanted) this.assembler = new Assembler().consume(token as never)
        return
      }
      // A scalar row.
      const index = this.index++
      if (name === TOO_LONG) {
        this.visitor.onShapeProblem(`${this.section?.name}[${index}]`, this.tooLongWords(token))
        return
      }
      if (this.wanted) return this.visitor.onRow?.(this.section as S, index, scalarOf(token))
      return
    }
    // Inside a top-level value, deeper than its own level.
    if (opens) this.depth++
    else if (name === 'endObject' || name === 'endArray') this.depth--
    if (this.mode !== 'rows' && this.mode !== 'marker') {
      if (this.depth === 1) this.mode = 'none'
      return
    }
    const rowLevel = this.mode === 'rows' ? 3 : 2
    if (name === 'keyValue' && this.depth === rowLevel) this.field = token.value as string
    this.size += 1 + (typeof token.value === 'string' ? token.value.length : 0)
    if (name === TOO_LONG) {
      // The field it is in, unless it is a key of the row itself (whose name is what was too long).
      const inField = this.field !== undefined && !(token.value === 'endKey' && this.depth === rowLevel)
      this.refuse(inField ? `${this.rowPath()}.${this.field}` : this.rowPath(), this.tooLongWords(token))
    } else if (this.size > this.largestRow) {
      this.refuse(this.rowPath(), `is larger than any ${this.mode === 'marker' ? 'marker' : 'row'} may be; not read`)
    }
    const assembling = this.mode === 'marker' || this.wanted
    if (assembling && this.assembler !== undefined) this.assembler.consume(token as never)
    if (this.depth !== rowLevel - 1) return
    // The row (or the marker) ends.
    const value = this.assembler?.current
    this.assembler = undefined
    const refused = this.refused
    this.refused = undefined
    if (this.mode === 'marker') {
      this.mode = 'none'
      if (refused !== undefined) this.visitor.onShapeProblem(refused.path, refused.message)
      else this.visitor.onMarker?.(value)
      return
    }
    const index = this.index++
    if (refused !== undefined) this.visitor.onShapeProblem(refused.path, refused.message)
    else if (this.wanted) return this.visitor.onRow?.(this.section as S, index, value)
  }

  private topLevel(token: Token, opens: boolean): void {
    const { name } = token
    if (name === 'endObject') {
      this.depth = 0
      return
    }
    if (name === 'keyValue' || (name === TOO_LONG && token.value === 'endKey')) {
      this.keyTooLong = name === TOO_LONG
      this.key = this.keyTooLong ? undefined : (token.value as string)
      return
    }
    // The value of `key` starts.
    const key = this.key ?? ''
    this.mode = 'skip'
    if (this.keyTooLong) {
      this.visitor.onShapeProblem(TOP_LEVEL, this.tooLongWords({ name: TOO_LONG, value: 'endKey' }))
    } else if (key === MARKER) {
      this.mode = 'marker'
      this.size = 1
      this.refused = undefined
      this.field = undefined
      this.assembler = new Assembler()
    } else if (this.byName.has(key) || this.foreign.includes(key)) {
      if (name === 'startArray') {
        this.depth = 2
        this.index = 0
        if (!this.byName.has(key)) {
          this.mode = 'foreign'
          return
        }
        this.mode = 'rows'
        this.section = this.byName.get(key)
        this.wanted = this.visitor.wants?.(this.section as S) ?? true
        this.visitor.onSection?.(this.section as S)
        return
      }
      this.visitor.onShapeProblem(key, 'must be an array')
    } else {
      const known = [MARKER, ...this.sections.map((section) => section.name)]
      const skipped = this.foreign.length === 0 ? '' : `; ${listed(this.foreign)} are skipped`
      this.visitor.onShapeProblem(key, `is not a known key (expected ${known.join(', ')}${skipped})`)
    }
    if (opens) {
      this.depth = 2
      if (this.mode === 'marker') this.assembler?.consume(token as never)
    } else if (this.mode === 'marker') {
      this.mode = 'none'
      if (name === TOO_LONG) this.visitor.onShapeProblem(MARKER, this.tooLongWords(token))
      else this.visitor.onMarker?.(scalarOf(token))
    } else {
      this.mode = 'none'
    }
  }

  private tooLongWords(token: Token): string {
    const what = token.value === 'endNumber' ? 'a number' : token.value === 'endKey' ? 'a key' : 'a string'
    return `${token.value === 'endKey' ? 'has' : 'is'} ${what} longer than any field accepts (${withThousands(this.limits.longestValue)} characters); not read`
  }
}

/** Walks `file`'s top-level object, whose known keys are the marker, `sections` and the foreign sections (foreignSections). */
export async function walkSections<S extends NamedSection>(
  file: string,
  sections: readonly S[],
  visitor: SectionVisitor<S>,
  limits: SectionLimits,
): Promise<void> {
  const total = statSync(file).size
  const input = createReadStream(file, { highWaterMark: 256 * 1024 })
  // The tokenizer itself, called on each chunk of text: its tokens come back as an array, far
  // cheaper than one stream event per token. Nothing is packed by it, so nothing grows unseen.
  const tokenize = jsonParser({ packValues: false, streamValues: true })
  const decoder = createTextDecoder()
  const pack = createPacker(limits.longestValue)
  const walk = new Walk(sections, visitor, limits)
  let lastReported = 0
  const feed = async (text: string | typeof END) => {
    const tokens = tokenize(text as string) as unknown
    if (tokens === END) return
    for (const streamed of (tokens as { values: Token[] }).values) {
      const token = pack(streamed)
      if (token === undefined) continue
      const pending = walk.take(token)
      if (pending !== undefined) await pending
      if (walk.stopped) return
    }
  }
  try {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      await feed(decoder.write(chunk))
      if (walk.stopped) return
      if (input.bytesRead - lastReported > total / 200) {
        lastReported = input.bytesRead
        visitor.onBytes?.(input.bytesRead, total)
      }
    }
    await feed(decoder.end())
    // The end: a file cut short is found here.
    if (!walk.stopped) await feed(END)
  } catch (error) {
    if (isParserFault(error)) throw new BadJsonError(await jsonFault(createReadStream(file), error.message))
    throw error
  } finally {
    input.destroy()
  }
  if (!walk.stopped) visitor.onBytes?.(total, total)
}

function scalarOf(token: Token): unknown {
  switch (token.name) {
    case 'nullValue':
      return null
    case 'trueValue':
      return true
    case 'falseValue':
      return false
    case 'numberValue':
      return Number(token.value)
    default:
      return token.value
  }
}

/** A file's bytes as text, chunk by chunk (a character may span two), a leading byte-order mark dropped. */
function createTextDecoder() {
  const decoder = new StringDecoder('utf8')
  let first = true
  return {
    write(chunk: Buffer): string {
      const text = decoder.write(chunk)
      if (!first || text.length === 0) return text
      first = false
      // A byte-order mark is not JSON; an editor may have written one.
      return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
    },
    end: () => decoder.end(),
  }
}

/** Whether `error` is the tokenizer's: the text is not JSON. */
const isParserFault = (error: unknown): error is Error => error instanceof Error && /^Parser/.test(error.message)

/**
 * A data file's first bytes, judged as they arrive, before the file is copied or read on: a text
 * that is not JSON, or JSON whose top level is not an object, is known for what it is from its first
 * bytes, and nothing after them changes that. A start that passes may still be refused later.
 */
export class DataFileStart {
  private readonly tokenize = jsonParser({ packValues: false, streamValues: true })
  private readonly decoder = createTextDecoder()
  private readonly seen: Buffer[] = []
  private opened = false

  /** Takes the next bytes. Throws BadJsonError at a fault of JSON, NotAnObjectError at a first value that is no object. */
  async take(chunk: Buffer): Promise<void> {
    this.seen.push(chunk)
    let tokens: unknown
    try {
      tokens = this.tokenize(this.decoder.write(chunk))
    } catch (error) {
      // The fault is in the bytes seen: the verifier finds it there, as it would in the whole file.
      if (isParserFault(error)) throw new BadJsonError(await jsonFault(Readable.from(this.seen), error.message))
      throw error
    }
    if (this.opened || tokens === END) return
    const [token] = (tokens as { values: Token[] }).values
    if (token === undefined) return
    if (token.name !== 'startObject') throw new NotAnObjectError()
    this.opened = true
  }
}

/** A data file whose top level is not an object (DataFileStart): the walk would read nothing of it. */
export class NotAnObjectError extends Error {
  constructor() {
    super('the top level is not an object')
  }
}

/** The verifier knows the line and column of a fault; the parser only what it expected. */
async function jsonFault(text: Readable, parserMessage: string): Promise<string> {
  const check = text.pipe(verifier.asStream())
  try {
    // The verifier emits nothing; it throws at the fault.
    await check.toArray()
  } catch (error) {
    const { line, pos, offset, message } = error as { line?: number; pos?: number; offset?: number; message: string }
    if (line !== undefined) return `not valid JSON at line ${line}, column ${pos} (byte ${offset}): ${message.split(': ').at(-1) ?? message}`
  }
  return `not valid JSON: ${parserMessage}`
}
