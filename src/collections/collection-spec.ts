// What a collection exposes to the query language: for each API field name, its column, its type,
// and whether it may be filtered, sorted and searched. Field names from a query string are looked
// up here and never reach SQL as text.

export type FieldType = 'integer' | 'string' | 'boolean' | 'timestamp'

export interface FieldSpec {
  /** The API name (`publishedAt`). */
  readonly name: string
  /** The column, qualified where the list query joins (`comments.created_at`). */
  readonly column: string
  readonly type: FieldType
  /** Allowed values, for enumerations (`role`, `status`). */
  readonly values?: readonly string[]
  readonly nullable?: boolean
  /** Compared (to lower(value)), sorted and indexed as lower(column): e-mail addresses. */
  readonly caseInsensitive?: boolean
  /** `?field=value` is allowed. Long free text is searched, not compared. */
  readonly filterable: boolean
  readonly sortable: boolean
  /** Text that `q` searches (and `fields` may name). */
  readonly searchable: boolean
}

export interface CollectionSpec {
  /** The resource's name, part of every cursor's fingerprint. */
  readonly name: string
  readonly fields: ReadonlyMap<string, FieldSpec>
  /** The tie-breaker that makes every order total: a unique, non-null integer. */
  readonly id: FieldSpec
  /** What `q` searches when `fields` is not given. */
  readonly defaultSearchFields: readonly FieldSpec[]
}

type FieldOptions = Omit<FieldSpec, 'name' | 'filterable' | 'sortable' | 'searchable'> & Partial<Pick<FieldSpec, 'filterable' | 'sortable' | 'searchable'>>

export function defineCollection(name: string, fields: Record<string, FieldOptions>): CollectionSpec {
  const map = new Map<string, FieldSpec>()
  for (const [fieldName, options] of Object.entries(fields)) {
    map.set(fieldName, {
      name: fieldName,
      filterable: true,
      sortable: true,
      searchable: false,
      ...options,
    })
  }
  const id = map.get('id')
  if (id === undefined || id.type !== 'integer' || id.nullable) throw new Error(`Collection ${name} needs an integer id`)
  return { name, fields: map, id, defaultSearchFields: [...map.values()].filter((f) => f.searchable) }
}
