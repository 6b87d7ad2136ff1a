// What other features may use of todos: the item schema and the service's type. The lint refuses
// other features' imports of anything else in this folder.
export { Todo } from './todos.schemas.js'
export type { TodosService } from './todos.service.js'
