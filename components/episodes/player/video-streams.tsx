"use client";

import type { PreviewStream } from "@/lib/previews/create-preview";
import { cn } from "../../ui/cn";
import type { PlaybackEngine } from "./engine";

/**
 * The preview's videos: the main one large, the others small beside it (a click makes one large).
 * A stream set aside is drawn as a panel naming it, with no video element, so nothing plays it.
 */
export function VideoStreams({
  engine,
  streams,
  main,
  failed,
  onError,
}: {
  engine: PlaybackEngine;
  streams: PreviewStream[];
  main: string;
  failed: (stream: string) => boolean;
  onError: (stream: string) => void;
}) {
  return (
    <div className="grid grid-cols-3 gap-2" data-streams>
      {streams.map((s) => {
        const isMain = s.stream === main;
        const setAside = failed(s.stream);
        return (
          <figure key={s.stream} className={cn("relative min-w-0", isMain ? "order-first col-span-3" : "col-span-1")}>
            {setAside ? (
              // In place of the video: the stream is named in the caption, the reason below the player.
              <div
                data-failed-stream={s.stream}
                className="flex aspect-video w-full items-center justify-center rounded bg-slate-900 p-2 pt-7 text-center text-xs text-slate-300"
              >
                Can&apos;t play this stream
              </div>
            ) : (
              <video
                ref={(element) => {
                  if (element) engine.attach(s.stream, element);
                  else engine.detach(s.stream);
                }}
                src={s.url}
                data-stream={s.stream}
                data-main={isMain || undefined}
                muted
                playsInline
                preload="auto"
                aria-label={`${s.stream} camera${isMain ? "" : " (small)"}`}
                className="aspect-video w-full rounded bg-black object-contain"
                onLoadedMetadata={() => engine.loaded(s.stream)}
                onTimeUpdate={isMain ? () => engine.atEnd() : undefined}
                onError={() => onError(s.stream)}
              />
            )}
            <figcaption className="pointer-events-none absolute left-1.5 top-1.5 max-w-[calc(100%-0.75rem)] truncate rounded bg-black/60 px-1.5 py-0.5 font-mono text-xs text-white">
              {s.stream}
            </figcaption>
            {isMain || setAside ? null : (
              <button
                type="button"
                className="absolute inset-0 rounded outline-offset-1 hover:ring-2 hover:ring-white/70 focus-visible:outline focus-visible:outline-2 focus-visible:outline-white"
                aria-label={`Show ${s.stream} large`}
                onClick={() => engine.showLarge(s.stream)}
              />
            )}
          </figure>
        );
      })}
    </div>
  );
}
