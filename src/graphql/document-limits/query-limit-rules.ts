// Validation rules that refuse abusive GraphQL documents before anything runs: too deep, too
// costly, too many fields or aliases in one selection set, too many directives on one node. Each rule
// measures every operation of the document (the operationName is chosen later) and reports at
// most one BAD_REQUEST error per operation, with extensions {limit, value, max}.
//
// One file per rule beside this one, over a shared walk (measure.ts) and the cost model
// (cost-measure.ts); a document too long or too nested to parse safely is refused before them,
// by the parser guard (parser-guard.ts). The limits of the document's shape (fields, aliases,
// depth, directives) run before graphql's own validation, in a pass of their own
// (src/graphql/pipeline/operation-pipeline.ts): some of graphql's rules cost more than linear time.
import type { ValidationRule } from 'graphql'
import type { GraphQLConfig } from '../../config.js'
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '../../collections/pagination.js'
import { aliasesRule } from './aliases-rule.js'
import type { ListSizes } from './cost-measure.js'
import { costRule } from './cost-rule.js'
import { depthRule } from './depth-rule.js'
import { directivesRule } from './directives-rule.js'
import { fieldsRule } from './fields-rule.js'

/** The bounds, from config (GRAPHQL_MAX_*; the defaults and why are in src/config/graphql-config.ts). */
export type QueryLimits = GraphQLConfig['limits']

/** The limits of the document's shape, each linear in its size: checked before graphql's validation. */
export function shapeLimitRules(limits: QueryLimits): ValidationRule[] {
  return [fieldsRule(limits.maxFieldsPerSelection), depthRule(limits.maxDepth), aliasesRule(limits.maxAliases), directivesRule(limits.maxDirectives)]
}

/** The cost limit, which reads the schema: checked with graphql's validation. */
export function costLimitRules(limits: QueryLimits, listSizes: ListSizes = { defaultLimit: DEFAULT_PAGE_LIMIT, maxLimit: MAX_PAGE_LIMIT }): ValidationRule[] {
  return [costRule(limits.maxCost, listSizes)]
}

/** The five limits as rules for graphql's validate, beside its own. */
export function queryLimitRules(limits: QueryLimits, listSizes: ListSizes = { defaultLimit: DEFAULT_PAGE_LIMIT, maxLimit: MAX_PAGE_LIMIT }): ValidationRule[] {
  return [...shapeLimitRules(limits), ...costLimitRules(limits, listSizes)]
}
