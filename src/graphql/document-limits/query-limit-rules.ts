// Validation rules that refuse abusive GraphQL documents before anything runs: too deep, too
// costly, too many aliases in one selection set, too many directives on one node. Each rule
// measures every operation of the document (the operationName is chosen later) and reports at
// most one BAD_REQUEST error per operation, with extensions {limit, value, max}.
//
// One file per rule beside this one, over a shared walk (measure.ts) and the cost model
// (cost-measure.ts); a document too long or too nested to parse safely is refused before them,
// by the parser guard (parser-guard.ts).
import type { ValidationRule } from 'graphql'
import type { GraphQLConfig } from '../../config.js'
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '../../collections/pagination.js'
import { aliasesRule } from './aliases-rule.js'
import type { ListSizes } from './cost-measure.js'
import { costRule } from './cost-rule.js'
import { depthRule } from './depth-rule.js'
import { directivesRule } from './directives-rule.js'

/** The bounds, from config (GRAPHQL_MAX_*; the defaults and why are in src/config/graphql-config.ts). */
export type QueryLimits = GraphQLConfig['limits']

/** The four limits as rules for graphql's validate, beside its own. */
export function queryLimitRules(limits: QueryLimits, listSizes: ListSizes = { defaultLimit: DEFAULT_PAGE_LIMIT, maxLimit: MAX_PAGE_LIMIT }): ValidationRule[] {
  return [depthRule(limits.maxDepth), costRule(limits.maxCost, listSizes), aliasesRule(limits.maxAliases), directivesRule(limits.maxDirectives)]
}
