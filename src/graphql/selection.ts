// What a field's selection asks of the object it returns: the names of the fields selected on it
// (through fragments), so that its resolver reads only their columns (src/db/projection.ts).
import { type FieldNode, type FragmentDefinitionNode, type GraphQLResolveInfo, Kind, type SelectionSetNode } from 'graphql'

/** Turns the field names selected on a resolver's object into what it reads with (a column set). */
export interface Selector<T> {
  /** Where the object sits under the field: [] for the field's own value, ['edges', 'node'] in a connection. */
  readonly path: readonly string[]
  readonly select: (fields: ReadonlySet<string>) => T
}

/** Each field node's answers, by selector: a document's nodes outlive its requests (the parse cache). */
const answers = new WeakMap<FieldNode, Map<Selector<unknown>, unknown>>()

/**
 * What `selector` makes of the names selected under the field at its path. Directives are not
 * read: a field under `@include(if: false)` is counted, so a read may take a column more, never
 * one less. Kept by field node when the field has one (the same document asks the same).
 */
export function selectionOf<T>(info: GraphQLResolveInfo, selector: Selector<T>): T {
  const { fieldNodes } = info
  const node = fieldNodes.length === 1 ? fieldNodes[0] : undefined
  if (node === undefined) return selector.select(namesAt(fieldNodes, info.fragments, selector.path))
  let known = answers.get(node)
  if (known === undefined) {
    known = new Map()
    answers.set(node, known)
  }
  if (known.has(selector)) return known.get(selector) as T
  const answer = selector.select(namesAt(fieldNodes, info.fragments, selector.path))
  known.set(selector, answer)
  return answer
}

function namesAt(nodes: readonly FieldNode[], fragments: Record<string, FragmentDefinitionNode>, path: readonly string[]): Set<string> {
  const names = new Set<string>()
  // Fragment cycles are a validation error: by execution time there are none.
  const visit = (selectionSet: SelectionSetNode | undefined, depth: number): void => {
    if (selectionSet === undefined) return
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        if (depth === path.length) names.add(selection.name.value)
        else if (selection.name.value === path[depth]) visit(selection.selectionSet, depth + 1)
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        visit(selection.selectionSet, depth)
      } else {
        visit(fragments[selection.name.value]?.selectionSet, depth)
      }
    }
  }
  for (const node of nodes) visit(node.selectionSet, 0)
  return names
}
