// The walk every document limit but directives shares: each operation of a document is measured
// once, each limit saying how a field and a union of selections sum up (a Measure). It is a loop
// over selection sets, not graphql's visit: a megabyte of fields must cost milliseconds, and
// visit's set-up per call would dominate a document of many small fragments.
//
// Fragments are measured once each, where first spread, on an explicit stack (never recursion),
// so fragment cycles and long chains of fragments terminate: a spread that closes a cycle counts
// as empty, and graphql's NoFragmentCyclesRule reports the cycle.
import {
  type GraphQLError,
  Kind,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  getNamedType,
  isInterfaceType,
  isObjectType,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql'

export interface Measure<T> {
  /** Where `field` finds each field's definition; without it (a lookup per field costs), none is. */
  readonly schema?: GraphQLSchema
  readonly empty: T
  /** A field, given the sum of its own selections (`empty` for a leaf). */
  field(node: FieldNode, selections: T, definition: GraphQLField<unknown, unknown> | undefined): T
  /** Two selections of one selection set (fields, or fragments spread or inlined into it). */
  add(a: T, b: T): T
}

/** A rule that measures each operation once, when the document is entered, and skips the rest of the pass. */
export function operationRule<T>(
  measureFor: (schema: GraphQLSchema) => Measure<T>,
  check: (context: ValidationContext, operation: OperationDefinitionNode, value: T) => GraphQLError | undefined,
): ValidationRule {
  return (context) => ({
    Document(document) {
      for (const [operation, value] of measureOperations(document, measureFor(context.getSchema()))) {
        const error = check(context, operation, value)
        if (error !== undefined) context.reportError(error)
      }
      return false
    },
  })
}

interface Fragment<T> {
  readonly definition: FragmentDefinitionNode
  /** Set once measured: a spread met after `started` but before then closes a cycle, and counts as empty. */
  value: T | undefined
  started: boolean
}

/** Each operation's measure; a fragment is measured once, where it is first spread. */
export function measureOperations<T>(document: DocumentNode, measure: Measure<T>): Array<[OperationDefinitionNode, T]> {
  const fragments = new Map<string, Fragment<T>>()
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION && !fragments.has(definition.name.value)) {
      fragments.set(definition.name.value, { definition, value: undefined, started: false })
    }
  }
  return document.definitions
    .filter((definition) => definition.kind === Kind.OPERATION_DEFINITION)
    .map((operation) => [operation, measureSelections(operation, measure, fragments)])
}

/** A selection set being summed: a field's (its sum goes through `field`), an inline fragment's, or a spread fragment's. */
interface Frame<T> {
  readonly selections: readonly SelectionNode[]
  index: number
  sum: T
  readonly type: GraphQLNamedType | null | undefined
  readonly field: FieldNode | undefined
  readonly definition: GraphQLField<unknown, unknown> | undefined
  readonly fragment: Fragment<T> | undefined
}

/**
 * One loop over the operation's selection sets, with the fragments it spreads on the same stack:
 * a fragment spread for the first time is measured there, and its measure kept for the next spreads.
 */
function measureSelections<T>(operation: OperationDefinitionNode, measure: Measure<T>, fragments: ReadonlyMap<string, Fragment<T>>): T {
  const { schema } = measure
  const frame = (
    selectionSet: SelectionSetNode,
    type: Frame<T>['type'],
    field?: FieldNode,
    definition?: Frame<T>['definition'],
    fragment?: Fragment<T>,
  ): Frame<T> => ({
    selections: selectionSet.selections,
    index: 0,
    sum: measure.empty,
    type,
    field,
    definition,
    fragment,
  })
  const frames = [frame(operation.selectionSet, schema?.getRootType(operation.operation))]
  for (;;) {
    const top = frames[frames.length - 1]!
    const selection = top.selections[top.index++]
    if (selection === undefined) {
      frames.pop()
      const parent = frames[frames.length - 1]
      if (parent === undefined) return top.sum
      if (top.fragment !== undefined) top.fragment.value = top.sum
      parent.sum = measure.add(parent.sum, top.field === undefined ? top.sum : measure.field(top.field, top.sum, top.definition))
    } else if (selection.kind === Kind.FIELD) {
      const definition = schema && fieldDefinition(top.type, selection.name.value)
      if (selection.selectionSet === undefined) top.sum = measure.add(top.sum, measure.field(selection, measure.empty, definition))
      else frames.push(frame(selection.selectionSet, definition && getNamedType(definition.type), selection, definition))
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const type = selection.typeCondition === undefined ? top.type : schema?.getType(selection.typeCondition.name.value)
      frames.push(frame(selection.selectionSet, type))
    } else {
      const fragment = fragments.get(selection.name.value)
      if (fragment === undefined || fragment.started) {
        top.sum = measure.add(top.sum, fragment?.value ?? measure.empty)
      } else {
        fragment.started = true
        const { typeCondition, selectionSet } = fragment.definition
        frames.push(frame(selectionSet, schema?.getType(typeCondition.name.value), undefined, undefined, fragment))
      }
    }
  }
}

function fieldDefinition(parentType: GraphQLNamedType | null | undefined, name: string): GraphQLField<unknown, unknown> | undefined {
  if (name === SchemaMetaFieldDef.name) return SchemaMetaFieldDef
  if (name === TypeMetaFieldDef.name) return TypeMetaFieldDef
  return isObjectType(parentType) || isInterfaceType(parentType) ? parentType.getFields()[name] : undefined
}

/** Whether a field is introspection (`__schema`, `__type`), which the limits bound apart; `__typename` is an ordinary field. */
export const isIntrospection = (node: FieldNode): boolean => node.name.value.startsWith('__') && node.name.value !== '__typename'
