// The cabinet's only script, an enhancement: every action works without it.
// Buttons with data-copy copy the text of the element the attribute names.
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.hidden = false;
  button.addEventListener('click', async () => {
    const source = document.getElementById(button.dataset.copy);
    if (!source) return;
    await navigator.clipboard.writeText(source.textContent.trim());
    const label = button.textContent;
    button.textContent = button.dataset.copied || label;
    setTimeout(() => (button.textContent = label), 1500);
  });
}
