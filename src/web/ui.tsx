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

export function Link(props: { href: string; children: ComponentChildren; current?: boolean }) {
  return (
    <a
      href={props.href}
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

export function Field(props: {
  label: string;
  type?: "text" | "email" | "password" | "search";
  value: string;
  onInput: (v: string) => void;
  autocomplete?: string;
  required?: boolean;
  minLength?: number;
  hint?: string;
}) {
  const id = `f-${props.label.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
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
      {props.hint && (
        <small id={`${id}-hint`} class="hint">
          {props.hint}
        </small>
      )}
    </div>
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
