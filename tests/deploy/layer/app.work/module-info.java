module app.work {
    exports app.work;
}
