/** A tenant's own page template (migration 0035); the built-ins are in code, not here. */
export interface TemplatesTable {
  id: string;
  tenant_id: string;
  name: string;
  description: string;
  /** Content JSON, as a page holds it. */
  content: string;
  /** JSON: the actions as a page stores them (with the actionIds the content's cta sections name). */
  actions: string;
  header_action_id: string | null;
  created_at: string;
  updated_at: string;
}
