// Walks a data file's top-level object with stream-json, one row at a time: the file is never
// held whole, only the row being read. Import reads a file through this twice (check, then write).
import { createReadStream, statSync } from 'node:fs'
import Assembler from 'stream-json/assembler.js'
import parser from 'stream-json/parser.js'
import verifier from 'stream-json/utils/verifier.js'

export const SECTIONS = ['users', 'posts', 'comments', 'todos'] as const
export type Section = (typeof SECTIONS)[number]
export const MARKER = 'threadline'

export interface SectionVisitor {
  /** The marker's value, whenever it comes. */
  onMarker?(value: unknown): void
  /** A row of a section, in file order; `index` is its place in the section's array. */
  onRow?(section: Section, index: number, row: unknown): void | Promise<void>
  /** Whether a section's rows are wanted; the others are parsed but not assembled. */
  wants?(section: Section): boolean
  /** A section begins (in file order) and ends. */
  onSection?(section: Section): void
  onSectionEnd?(section: Section): void | Promise<void>
  /** Something at the top level that is not a data file's: an unknown key, a section that is no array. */
  onShapeProblem(path: string, message: string): void
  /** Bytes of the file read so far, of `total`. */
  onBytes?(read: number, total: number): void
}

/** A file that is not JSON: the parser's words and where the verifier finds the fault. */
export class BadJsonError extends Error {}

type Token = { name: string; value?: unknown }

export async function walkSections(file: string, visitor: SectionVisitor): Promise<void> {
  const total = statSync(file).size
  const input = createReadStream(file, { highWaterMark: 256 * 1024 })
  const tokens = input.pipe(parser.asStream({ streamValues: false }))
  // Where the walker is: 0 before the top-level object, 1 inside it, deeper inside a value.
  let depth = 0
  let key: string | undefined
  // What the value under the current top-level key is for.
  let mode: 'marker' | 'rows' | 'skip' | 'none' = 'none'
  let section: Section | undefined
  let wanted = true
  let index = 0
  let assembler: Assembler | undefined
  let lastReported = 0
  try {
    for await (const token of tokens as AsyncIterable<Token>) {
      const { name } = token
      if (depth === 0) {
        if (name !== 'startObject') {
          visitor.onShapeProblem('(top level)', 'must be an object with users, posts, comments and todos')
          tokens.destroy()
          input.destroy()
          return
        }
        depth = 1
        continue
      }
      if (depth === 1) {
        if (name === 'endObject') {
          depth = 0
          continue
        }
        if (name === 'keyValue') {
          key = token.value as string
          continue
        }
        // The value of `key` starts.
        if (key === MARKER) {
          mode = 'marker'
          assembler = new Assembler()
        } else if ((SECTIONS as readonly string[]).includes(key ?? '')) {
          section = key as Section
          if (name === 'startArray') {
            mode = 'rows'
            index = 0
            wanted = visitor.wants?.(section) ?? true
            visitor.onSection?.(section)
            depth = 2
            continue
          }
          visitor.onShapeProblem(section, 'must be an array')
          mode = 'skip'
        } else {
          visitor.onShapeProblem(key ?? '', 'is not a known key (expected threadline, users, posts, comments, todos)')
          mode = 'skip'
        }
        if (name === 'startObject' || name === 'startArray') {
          depth = 2
          if (mode === 'marker') assembler?.consume(token as never)
        } else if (mode === 'marker') {
          visitor.onMarker?.(token.value ?? null)
          mode = 'none'
        }
        continue
      }
      // depth >= 2: inside a top-level value.
      if (mode === 'rows' && depth === 2) {
        if (name === 'endArray') {
          depth = 1
          mode = 'none'
          await visitor.onSectionEnd?.(section as Section)
          continue
        }
        if (name === 'startObject' || name === 'startArray') {
          depth = 3
          if (wanted) assembler = new Assembler().consume(token as never)
          continue
        }
        // A scalar row.
        if (wanted) await visitor.onRow?.(section as Section, index, scalarOf(token))
        index++
        continue
      }
      if (name === 'startObject' || name === 'startArray') depth++
      else if (name === 'endObject' || name === 'endArray') depth--
      if (mode === 'rows' || mode === 'marker') {
        if (assembler !== undefined && (mode === 'marker' || wanted)) assembler.consume(token as never)
        if (mode === 'rows' && depth === 2) {
          if (wanted) await visitor.onRow?.(section as Section, index, assembler?.current)
          assembler = undefined
          index++
          if (input.bytesRead - lastReported > total / 200) {
            lastReported = input.bytesRead
            visitor.onBytes?.(input.bytesRead, total)
          }
        } else if (mode === 'marker' && depth === 1) {
          visitor.onMarker?.(assembler?.current)
          assembler = undefined
          mode = 'none'
        }
      } else if (depth === 1) {
        mode = 'none'
      }
    }
  } catch (error) {
    input.destroy()
    if (error instanceof Error && /^Parser/.test(error.message)) throw new BadJsonError(await jsonFault(file, error.message))
    throw error
  }
  visitor.onBytes?.(total, total)
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

/** The verifier knows the line and column of a fault; the parser only what it expected. */
async function jsonFault(file: string, parserMessage: string): Promise<string> {
  const check = createReadStream(file).pipe(verifier.asStream())
  try {
    // The verifier emits nothing; it throws at the fault.
    await check.toArray()
  } catch (error) {
    const { line, pos, offset, message } = error as { line?: number; pos?: number; offset?: number; message: string }
    if (line !== undefined) return `not valid JSON at line ${line}, column ${pos} (byte ${offset}): ${message.split(': ').at(-1) ?? message}`
  }
  return `not valid JSON: ${parserMessage}`
}
