// The cabinet's view layer: Preact components written with htm's tagged templates
// and rendered to a string on the server (docs/cabinet.md, "Views"). Every
// interpolated value is escaped by the renderer; raw HTML would need
// `dangerouslySetInnerHTML`, which the cabinet never uses (a lint rule refuses it).
// Components are plain typed functions, called as functions so TypeScript checks
// their props: `${Field({ name, label })}`.
import { html } from 'htm/preact';
import type { ComponentChildren, VNode } from 'preact';
import { render } from 'preact-render-to-string';

export { html };

export type Children = ComponentChildren;
export type View = VNode | VNode[] | string | null;

/** A whole document: the doctype and the rendered tree. */
export function renderDocument(tree: View): string {
  return `<!doctype html>${render(tree as VNode)}`;
}
