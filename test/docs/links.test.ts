// Every relative link of README.md and of every Markdown file under docs/ (docs/decisions/
// included) resolves: to a file of the repository, and for a #fragment into Markdown to a heading
// of that file, by GitHub's slugs. Documents move (a section to its own decision, a reference to
// where users read it), and a link left pointing at the old place is what this catches.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { anchorsOf, linksOf } from '../helpers/doc-examples.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** README.md and every .md under docs/, at any depth. */
const DOCUMENTS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name))
    .sort(),
]

/** The problems of one document's links, each as "file:line: target: what is wrong". */
function brokenLinks(file: string): string[] {
  const markdown = readFileSync(join(ROOT, file), 'utf8')
  return linksOf(markdown).flatMap(({ line, target }) => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return []
    const where = `${file}:${line}: ${target}`
    const [path = '', fragment] = target.split('#')
    const resolved = path === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), decodeURI(path))
    if (relative(ROOT, resolved).startsWith('..')) return [`${where}: outside the repository`]
    if (!existsSync(resolved)) return [`${where}: no such file`]
    if (fragment === undefined) return []
    if (!resolved.endsWith('.md')) return [`${where}: a fragment into a file that is not Markdown`]
    return anchorsOf(readFileSync(resolved, 'utf8')).has(fragment) ? [] : [`${where}: no such heading`]
  })
}

describe('the documents’ links', () => {
  it('reach every document under docs/, the decisions among them', () => {
    expect(DOCUMENTS).toContain('docs/architecture.md')
    expect(DOCUMENTS.some((file) => file.startsWith('docs/decisions/'))).toBe(true)
  })

  it.each(DOCUMENTS)('%s: every relative link and #anchor resolves', (file) => {
    expect(brokenLinks(file)).toEqual([])
  })

  it('are judged by GitHub’s slugs', () => {
    expect(anchorsOf('# The package’s size\n## Retrying writes: `Idempotency-Key`\n## A\n## A\n')).toEqual(
      new Set(['the-packages-size', 'retrying-writes-idempotency-key', 'a', 'a-1']),
    )
  })
})
