import type { ReactNode } from "react";
import ReactMarkdown, { defaultUrlTransform, type Components } from "react-markdown";
import rehypeSanitize from "rehype-sanitize";
import remarkGfm from "remark-gfm";

/**
 * A Markdown document someone else wrote (a dataset's README, a licence's terms), rendered inert:
 * no raw HTML at all (react-markdown drops it; rehype-sanitize then keeps only GitHub's safe
 * elements and attributes), links only to http(s) and mailto, and no remote image loaded, since
 * loading one would tell its host who is reading and from where: an image is shown as its
 * description and address instead. Every Markdown document of the product goes through this one.
 */
export function DocumentMarkdown({
  text,
  className = "",
  keepFrontMatter = false,
}: {
  text: string;
  className?: string;
  /** Show a leading `---` block as written: a terms document is read whole, a dataset card is not. */
  keepFrontMatter?: boolean;
}) {
  return (
    <div className={`document-markdown min-w-0 text-sm leading-6 text-slate-700 wrap-anywhere ${className}`}>
      <ReactMarkdown
        remarkPlugins={[remarkGfm]}
        rehypePlugins={[rehypeSanitize]}
        urlTransform={safeUrl}
        components={COMPONENTS}
      >
        {keepFrontMatter ? text : withoutFrontMatter(text)}
      </ReactMarkdown>
    </div>
  );
}

/** Hugging Face dataset cards open with YAML metadata between `---` lines: not prose, so not shown. */
export function withoutFrontMatter(text: string): string {
  const match = /^---\r?\n[\s\S]*?\r?\n---\r?\n?/.exec(text);
  return match ? text.slice(match[0].length) : text;
}

/** http(s), mailto and in-page anchors; anything else (javascript:, data:, vbscript:) becomes nothing. */
function safeUrl(url: string): string {
  const kept = defaultUrlTransform(url);
  if (!kept) return "";
  if (kept.startsWith("#")) return kept;
  return /^(https?:|mailto:)/i.test(kept) ? kept : "";
}

const heading =
  (Tag: "h1" | "h2" | "h3" | "h4", size: string) =>
  ({ children }: { children?: ReactNode }) => (
    <Tag className={`mt-5 mb-2 font-semibold text-slate-900 first:mt-0 ${size}`}>{children}</Tag>
  );

const COMPONENTS: Components = {
  h1: heading("h1", "text-lg"),
  h2: heading("h2", "text-base"),
  h3: heading("h3", "text-sm"),
  h4: heading("h4", "text-sm"),
  p: ({ children }) => <p className="my-3">{children}</p>,
  ul: ({ children }) => <ul className="my-3 list-disc space-y-1 pl-5">{children}</ul>,
  ol: ({ children }) => <ol className="my-3 list-decimal space-y-1 pl-5">{children}</ol>,
  a: ({ href, children }) =>
    href ? (
      <a
        href={href}
        rel="nofollow noopener noreferrer"
        target="_blank"
        className="font-medium text-brand-700 underline underline-offset-2 hover:no-underline"
      >
        {children}
      </a>
    ) : (
      <span>{children}</span>
    ),
  // Never an <img>: the description, and where the image is, to open deliberately.
  img: ({ src, alt }) => (
    <span
      className="inline-flex max-w-full items-center gap-1 rounded bg-slate-100 px-1.5 py-0.5 text-xs text-slate-600"
      data-image-not-loaded
    >
      <span className="font-medium">Image:</span>
      <span className="wrap-anywhere">
        {alt ? `${alt} ` : ""}(image not loaded{typeof src === "string" && src ? `: ${src}` : ""})
      </span>
    </span>
  ),
  code: ({ children, className }) => (
    <code className={`rounded bg-slate-100 px-1 py-0.5 font-mono text-[0.85em] text-slate-800 ${className ?? ""}`}>
      {children}
    </code>
  ),
  pre: ({ children }) => (
    <pre className="my-3 overflow-x-auto rounded-md bg-slate-50 p-3 text-xs ring-1 ring-slate-200 [&_code]:bg-transparent [&_code]:p-0">
      {children}
    </pre>
  ),
  blockquote: ({ children }) => (
    <blockquote className="my-3 border-l-4 border-slate-200 pl-3 text-slate-600">{children}</blockquote>
  ),
  table: ({ children }) => (
    <div className="my-3 overflow-x-auto">
      <table className="min-w-full divide-y divide-slate-200 text-left text-xs">{children}</table>
    </div>
  ),
  th: ({ children }) => <th className="bg-slate-50 px-2 py-1 font-semibold text-slate-700">{children}</th>,
  td: ({ children }) => <td className="border-t border-slate-100 px-2 py-1 align-top">{children}</td>,
  hr: () => <hr className="my-4 border-slate-200" />,
};
