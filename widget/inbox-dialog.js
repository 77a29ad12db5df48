// The confirmation asked before a step that takes something away (closing a chat, archiving,
// cancelling an appointment): a modal <dialog>, so the focus stays inside and Escape cancels;
// the harmless choice has the focus first; cancelling gives the focus back to what opened it.
// A dialog's close event comes in a task of its own, after the dialog has closed: a question
// asked before it comes (Enter pressed again at once) settles the one before itself, and a
// close event that comes while the dialog is open again is an earlier question's, not the
// new one's answer.

export function createConfirm(dialog) {
  var title = dialog.querySelector('#confirm-title');
  var text = dialog.querySelector('#confirm-text');
  var ok = dialog.querySelector('#confirm-ok');
  var cancel = dialog.querySelector('#confirm-cancel');
  var settle = null;

  ok.addEventListener('click', function () { dialog.close('ok'); });
  cancel.addEventListener('click', function () { dialog.close('cancel'); });
  // Escape closes the dialog with no return value: a cancel.
  dialog.addEventListener('close', function () {
    if (dialog.open) return;
    var done = settle;
    settle = null;
    if (done) done(dialog.returnValue === 'ok');
  });

  /** Resolves true when the person confirms. */
  return function confirm(question) {
    if (settle) {
      // Asked over an open question, that one is cancelled; a closed one's answer stands.
      var confirmed = !dialog.open && dialog.returnValue === 'ok';
      if (dialog.open) dialog.close('cancel');
      var earlier = settle;
      settle = null;
      earlier(confirmed);
    }
    var opener = document.activeElement;
    title.textContent = question.title;
    text.textContent = question.text;
    ok.textContent = question.action;
    dialog.returnValue = '';
    dialog.showModal();
    cancel.focus();
    return new Promise(function (resolve) {
      settle = function (confirmed) {
        if (!confirmed && opener && opener.isConnected && typeof opener.focus === 'function') opener.focus();
        resolve(confirmed);
      };
    });
  };
}
