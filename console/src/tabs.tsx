import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';

// Tabs (WAI-ARIA's pattern): one tab list, arrows move between tabs, each panel labelled by its
// tab. Every panel stays mounted, only hidden: what is typed in one is still there on coming back.

export function Tabs<T extends string>({
  label,
  tabs,
  active,
  onChoose,
}: {
  label: string;
  tabs: readonly { id: T; title: string; panel: ComponentChildren }[];
  active: T;
  onChoose: (id: T) => void;
}) {
  const base = useId();
  const tabId = (id: T) => `${base}-tab-${id}`;
  const panelId = (id: T) => `${base}-panel-${id}`;
  const keyDown = (e: KeyboardEvent) => {
    const at = tabs.findIndex((t) => t.id === active);
    const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
    const to = e.key === 'Home' ? 0 : e.key === 'End' ? tabs.length - 1 : (at + step + tabs.length) % tabs.length;
    if (step === 0 && e.key !== 'Home' && e.key !== 'End') return;
    e.preventDefault();
    const next = tabs[to];
    if (!next) return;
    onChoose(next.id);
    document.getElementById(tabId(next.id))?.focus();
  };
  return (
    <div class="tabs">
      <div role="tablist" aria-label={label} class="tab-list" tabIndex={-1} onKeyDown={keyDown}>
        {tabs.map((t) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            id={tabId(t.id)}
            aria-selected={t.id === active}
            aria-controls={panelId(t.id)}
            tabIndex={t.id === active ? 0 : -1}
            onClick={() => onChoose(t.id)}
          >
            {t.title}
          </button>
        ))}
      </div>
      {tabs.map((t) => (
        <div key={t.id} role="tabpanel" id={panelId(t.id)} aria-labelledby={tabId(t.id)} hidden={t.id !== active}>
          {t.panel}
        </div>
      ))}
    </div>
  );
}
