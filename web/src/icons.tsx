/**
 * Icons as inline SVG (stroke in the text colour): they render on every system, where emoji such as
 * 👍 show as empty boxes without an emoji font. Decorative: the buttons carry the accessible names.
 */
import type { ComponentChildren } from 'preact';

function Icon({ children }: { children: ComponentChildren }) {
  return (
    <svg
      class="icon"
      width="16"
      height="16"
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      stroke-width="2"
      stroke-linecap="round"
      stroke-linejoin="round"
      aria-hidden="true"
      focusable="false"
    >
      {children}
    </svg>
  );
}

/** Thumbs up (a good answer). */
export const ThumbUpIcon = () => (
  <Icon>
    <path d="M7 10v11H3V10z" />
    <path d="M7 10l4-8a3 3 0 0 1 3 3v4h6a2 2 0 0 1 2 2.3l-1.4 8A2 2 0 0 1 18.6 21H7" />
  </Icon>
);

/** Thumbs down (a bad answer). */
export const ThumbDownIcon = () => (
  <Icon>
    <path d="M17 14V3h4v11z" />
    <path d="M17 14l-4 8a3 3 0 0 1-3-3v-4H4a2 2 0 0 1-2-2.3l1.4-8A2 2 0 0 1 5.4 3H17" />
  </Icon>
);

/** A pencil (rename). */
export const PencilIcon = () => (
  <Icon>
    <path d="M17 3l4 4L8 20H4v-4z" />
  </Icon>
);

/** A cross (delete). */
export const CrossIcon = () => (
  <Icon>
    <path d="M6 6l12 12M18 6L6 18" />
  </Icon>
);
