// What other features may use of tokens: the service's type. The lint refuses other features'
// imports of anything else in this folder.
export type { TokensService } from './tokens.service.js'
