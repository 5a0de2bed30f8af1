import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { subscribe } from "./api";

/** Re-render on session or rate-limit changes. */
export function useSession(): void {
  const [, tick] = useState(0);
  useEffect(() => subscribe(() => tick((n) => n + 1)), []);
}

/** Client-side navigation (the server answers every console path with the same page). */
export function navigate(href: string): void {
  history.pushState(null, "", href);
  dispatchEvent(new PopStateEvent("popstate"));
}

export function Link(props: {
  href: string;
  children: ComponentChildren;
  current?: boolean;
  class?: string;
  label?: string;
}) {
  return (
    <a
      href={props.href}
      class={props.class}
      aria-label={props.label}
      aria-current={props.current ? "page" : undefined}
      onClick={(e) => {
        if (e.ctrlKey || e.metaKey || e.shiftKey) return;
        e.preventDefault();
        navigate(props.href);
      }}
    >
      {props.children}
    </a>
  );
}

/** A polite live region for results and errors. */
export function Status(props: { text: string; error?: boolean }) {
  return (
    <p class={props.error ? "status error" : "status"} role={props.error ? "alert" : "status"}>
      {props.text}
    </p>
  );
}

export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

export function CopyButton(props: { text: string | (() => Promise<string>); label: string }) {
  const [done, setDone] = useState("");
  return (
    <span class="copy">
      <button
        type="button"
        onClick={async () => {
          const text = typeof props.text === "string" ? props.text : await props.text();
          setDone((await copyText(text)) ? "Copied." : "Copy failed: select the text instead.");
        }}
      >
        {props.label}
      </button>
      <span role="status" class="hint">
        {done}
      </span>
    </span>
  );
}

const COPY_ICON = (
  <svg viewBox="0 0 16 16" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="1.5">
    <rect x="5.5" y="5.5" width="8" height="8" rx="1.5" />
    <path d="M10.5 3.5v-1a1 1 0 0 0-1-1h-6a1 1 0 0 0-1 1v6a1 1 0 0 0 1 1h1" />
  </svg>
);
const DONE_ICON = (
  <svg viewBox="0 0 16 16" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="2">
    <path d="M3 8.5l3 3 7-7" />
  </svg>
);

/** A code block with a copy icon in its corner; the figure is named by `label`. */
export function CodeBlock(props: { code: string; label: string; copyLabel: string }) {
  const [done, setDone] = useState("");
  return (
    <figure class="code" aria-label={props.label}>
      <pre>
        <code>{props.code}</code>
      </pre>
      <button
        type="button"
        class="icon copy-icon"
        aria-label={props.copyLabel}
        title={props.copyLabel}
        onClick={async () => {
          setDone((await copyText(props.code)) ? "Copied." : "Copy failed: select the text.");
          setTimeout(() => setDone(""), 2000);
        }}
      >
        {done === "Copied." ? DONE_ICON : COPY_ICON}
      </button>
      <span role="status" class={done ? "copied" : "sr-only"}>
        {done}
      </span>
    </figure>
  );
}

interface FieldProps {
  label: string;
  type?: "text" | "email" | "password" | "search" | "url";
  value: string;
  onInput: (v: string) => void;
  autocomplete?: string;
  required?: boolean;
  minLength?: number;
  hint?: string;
  /** controls shown on the input's row (e.g. its submit button), aligned with it */
  children?: ComponentChildren;
}

export function Field(props: FieldProps) {
  const id = `f-${props.label.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.children ? (
        <div class="row">
          {input(id, props)}
          {props.children}
        </div>
      ) : (
        input(id, props)
      )}
      {props.hint && (
        <small id={`${id}-hint`} class="hint">
          {props.hint}
        </small>
      )}
    </div>
  );
}

function input(id: string, props: FieldProps) {
  return (
    <input
      id={id}
      type={(props.type ?? "text") as "text"}
      value={props.value}
      autocomplete={props.autocomplete}
      required={props.required}
      minLength={props.minLength}
      aria-describedby={props.hint ? `${id}-hint` : undefined}
      onInput={(e) => props.onInput((e.target as HTMLInputElement).value)}
    />
  );
}

/** True while the system asks for a dark colour scheme. */
export function useDark(): boolean {
  const q = useMemo(() => matchMedia("(prefers-color-scheme: dark)"), []);
  const [dark, setDark] = useState(q.matches);
  useEffect(() => {
    const on = () => setDark(q.matches);
    q.addEventListener("change", on);
    return () => q.removeEventListener("change", on);
  }, [q]);
  return dark;
}

/** The required e-mail field of the sign-up, log-in and forgot-password forms. */
export function EmailField(props: { value: string; onInput: (v: string) => void }) {
  return <Field label="E-mail" type="email" autocomplete="email" required {...props} />;
}
