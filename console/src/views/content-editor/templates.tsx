import { api, must, type Schema } from '../../api.js';
import { Status, useLoad } from '../../components.js';

// "Start from" in the New page form: a blank page, or one of the templates (the service's built-ins
// and the tenant's own, GET /v0/templates), whose content and buttons the page starts with.

export type Template = Schema<'TemplateSummary'>;

export function TemplateChoice({ value, onChoose }: { value: string; onChoose: (template: Template | undefined) => void }) {
  const templates = useLoad(async () => must(await api.GET('/v0/templates', { params: { query: { limit: 100 } } })).items, []);
  return (
    <fieldset class="group templates">
      <legend>Start from</legend>
      <label class="choice">
        <input type="radio" name="templateId" value="" checked={value === ''} onChange={() => onChoose(undefined)} /> A blank page
      </label>
      <Status loaded={templates}>
        {(templates.data ?? []).map((tpl) => (
          <label key={tpl.templateId} class="choice template">
            <input
              type="radio"
              name="templateId"
              value={tpl.templateId}
              checked={value === tpl.templateId}
              onChange={() => onChoose(tpl)}
            />{' '}
            <span>
              <strong>{tpl.name}</strong>
              {tpl.builtIn ? '' : ' (yours)'}
              {tpl.description && <span class="muted small"> · {tpl.description}</span>}
            </span>
          </label>
        ))}
      </Status>
    </fieldset>
  );
}
