export interface SearchCountsTable {
  source: string;
  scope_id: string;
  facet: string;
  gram: string;
  n: number | string | bigint;
}

export interface SearchDisorderTable {
  table_name: string;
  scope_id: string;
}

export interface SearchPostingsTable {
  source: string;
  scope_id: string;
  gram: string;
  created_at: string;
  row_id: string;
}
