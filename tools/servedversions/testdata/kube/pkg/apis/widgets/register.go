package widgets

const GroupName = "widgets.example.io"
