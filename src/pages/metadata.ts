import { Value } from '@sinclair/typebox/value';
import { Metadata, type MetadataPartial } from './schemas.js';

/**
 * Stored metadata is partial; responses carry every field, an unset one at its schema's empty
 * value ("" or a new []). Later layers win, field by field.
 */
export function fullMetadata(...layers: (MetadataPartial | null | undefined)[]): Metadata {
  return Object.assign(Value.Create(Metadata), ...layers.filter(Boolean));
}

export function parseMetadata(json: string | null): MetadataPartial | null {
  return json === null ? null : (JSON.parse(json) as MetadataPartial);
}
