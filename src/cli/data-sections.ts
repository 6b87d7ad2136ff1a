// The data files' sections: each feature's (src/features.ts), parents first. Export writes them in
// this order, import writes a section only after those it references, and emptying goes the other
// way, children first.
import type { DataSection } from '../data-section.js'
import { FEATURES } from '../features.js'

/**
 * `sections` ordered so that each comes after the sections it references, otherwise in the order
 * given. Throws for a reference to a section not given, or a cycle (which no order could write).
 */
export function parentsFirst(sections: readonly DataSection[]): DataSection[] {
  const names = new Set(sections.map(({ name }) => name))
  for (const { name, references = [] } of sections) {
    for (const parent of references) if (!names.has(parent)) throw new Error(`data section ${name} references ${parent}, which is no data section`)
  }
  const ordered: DataSection[] = []
  const placed = new Set<string>()
  while (ordered.length < sections.length) {
    const next = sections.find(({ name, references = [] }) => !placed.has(name) && references.every((parent) => placed.has(parent)))
    if (next === undefined)
      throw new Error(
        `data sections ${sections
          .filter(({ name }) => !placed.has(name))
          .map(({ name }) => name)
          .join(', ')} reference each other in a cycle`,
      )
    ordered.push(next)
    placed.add(next.name)
  }
  return ordered
}

/** Every feature's data section, parents first. */
export const DATA_SECTIONS: readonly DataSection[] = parentsFirst(FEATURES.flatMap(({ data }) => (data === undefined ? [] : [data])))
